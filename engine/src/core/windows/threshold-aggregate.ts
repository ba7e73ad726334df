/**
 * Aggregates that also count, exactly, the events slower than each configured latency threshold
 * (docs/semantics.md, "Latency thresholds"; docs/decisions/0044-exact-latency-thresholds.md). A
 * DDSketch rank is within α of a quantile, not an exact count: an SLO on "requests slower than
 * 300 ms" needs the count itself. The counts merge by addition, subtract with a prefix (discarding
 * panes) and travel in the aggregate's bytes: the sketch's bytes, then one little-endian f64 per
 * threshold (fixed width, so the sketch's own codec reads its part unchanged).
 */
import { HyperLogLog, SketchError, type RequestAggregate, type RequestInput } from "@tidemark/sketches";
import type { PaneValue } from "../../protocol.js";
import type { Aggregate, AggregateKind, UserHash } from "./aggregate.js";
import { routeHllPrecision, SketchAggregate } from "./sketch-aggregate.js";

/** Bytes per threshold count after the sketch's bytes. */
const COUNT_BYTES = 8;

/** `latencyAbove` of a pane value: the threshold's decimal string → the exact count above it. */
export type LatencyAbove = Readonly<Record<string, number>>;

/** An index past V8's largest gap for fast elements: setting it makes an object's elements a dictionary. */
const FAR_INDEX = 2 ** 30;

/**
 * An empty object whose integer-like keys ("300", "1000") go to a dictionary: a plain object
 * would hold its elements in an array as long as the largest key (8 KB for "1000", measured), per
 * pane value (engine/BENCHMARKS.md, "Latency thresholds").
 */
function sparseObject(): Record<string, number> {
  const o: Record<number, number> = {};
  o[FAR_INDEX] = 0;
  delete o[FAR_INDEX];
  return o as Record<string, number>;
}

function corrupt(what: string): SketchError {
  return new SketchError("TM_SKETCH_CODEC_CORRUPT", `cannot decode latency threshold counts (${what})`);
}

/** The aggregate kind for `thresholds` (ascending, non-empty: validate-config.ts). */
export function thresholdAggregates(
  relativeAccuracy: number,
  hllPrecision: number,
  thresholds: readonly number[],
): AggregateKind {
  const k = thresholds.length;
  const keys = thresholds.map((t) => String(t));
  const scratch = { buf: new Uint8Array(256) };

  class ThresholdAggregate extends SketchAggregate {
    /** above[i]: events with latency_ms > thresholds[i] (non-increasing in i). */
    above: number[] = new Array<number>(k).fill(0);
    private thresholdValue: PaneValue | null = null;

    override add(latencyMs: number, error: boolean, user: UserHash | string): void {
      super.add(latencyMs, error, user);
      for (let i = 0; i < k && latencyMs > (thresholds[i] as number); i++)
        this.above[i] = (this.above[i] as number) + 1;
    }
    override addInput(input: RequestInput): void {
      super.addInput(input);
      const latencyMs = input.latency;
      for (let i = 0; i < k && latencyMs > (thresholds[i] as number); i++)
        this.above[i] = (this.above[i] as number) + 1;
    }
    override merge(other: Aggregate | RequestAggregate): void {
      const theirs = (other as ThresholdAggregate).above.slice();
      super.merge(other);
      this.thresholdValue = null;
      for (let i = 0; i < k; i++) this.above[i] = (this.above[i] as number) + (theirs[i] as number);
    }
    override subtract(prefix: Aggregate | RequestAggregate): void {
      const theirs = (prefix as ThresholdAggregate).above.slice();
      for (let i = 0; i < k; i++)
        if ((theirs[i] as number) > (this.above[i] as number))
          throw new SketchError("TM_SKETCH_NOT_SUBSET", "cannot subtract more slow events than the aggregate holds");
      super.subtract(prefix);
      this.thresholdValue = null;
      for (let i = 0; i < k; i++) this.above[i] = (this.above[i] as number) - (theirs[i] as number);
    }
    override clone(): ThresholdAggregate {
      const c = super.clone() as ThresholdAggregate;
      c.above = this.above.slice();
      return c;
    }
    override value(): PaneValue {
      const cached = this.thresholdValue;
      const count = this.count;
      if (cached !== null && cached.count === count) return cached;
      const latencyAbove = sparseObject();
      for (let i = 0; i < k; i++) latencyAbove[keys[i] as string] = this.above[i] as number;
      const v = Object.freeze({ ...super.value(), latencyAbove: Object.freeze(latencyAbove) });
      if (count > 16) this.thresholdValue = v;
      return v;
    }
    override encode(): Uint8Array {
      let out = new Uint8Array(0);
      this.encodeInto((buf, length) => (out = buf.slice(0, length)));
      return out;
    }
    override encodeInto(use: (buf: Uint8Array, length: number) => void): void {
      super.encodeInto((buf, length) => {
        const total = length + k * COUNT_BYTES;
        if (scratch.buf.length < total) scratch.buf = new Uint8Array(Math.max(total, 2 * scratch.buf.length));
        const out = scratch.buf;
        out.set(buf.subarray(0, length));
        const view = new DataView(out.buffer, out.byteOffset + length, k * COUNT_BYTES);
        for (let i = 0; i < k; i++) view.setFloat64(i * COUNT_BYTES, this.above[i] as number, true);
        use(out, total);
      });
    }
    override heapBytes(): number {
      return super.heapBytes() + 24 + 8 * k;
    }
    override dataBytes(): number {
      return super.dataBytes() + COUNT_BYTES * k;
    }
  }

  const decodeRange = (bytes: Uint8Array, start: number, end: number): ThresholdAggregate => {
    const countsAt = end - k * COUNT_BYTES;
    if (countsAt < start) throw corrupt("too short");
    const a = ThresholdAggregate.decodeRange(bytes, start, countsAt) as ThresholdAggregate;
    const view = new DataView(bytes.buffer, bytes.byteOffset + countsAt, k * COUNT_BYTES);
    let bound = a.count;
    for (let i = 0; i < k; i++) {
      const c = view.getFloat64(i * COUNT_BYTES, true);
      if (!Number.isInteger(c) || c < 0 || c > bound) throw corrupt(`threshold ${thresholds[i]}: ${c} of ${a.count}`);
      a.above[i] = bound = c;
    }
    return a;
  };
  const service = Object.freeze({ relativeAccuracy, hllPrecision });
  const route = Object.freeze({ relativeAccuracy, hllPrecision: routeHllPrecision(hllPrecision) });
  return {
    create: (isRoute) => new ThresholdAggregate(isRoute === true ? route : service),
    decode: (bytes) => decodeRange(bytes, 0, bytes.length),
    decodeRange,
    hashUser: (user) => HyperLogLog.hash(user),
  };
}
