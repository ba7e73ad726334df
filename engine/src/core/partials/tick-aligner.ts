/**
 * The merge stage's input alignment (docs/decisions/0029-two-stage-dataflow.md): partial batches
 * of every upstream worker, in whatever order they arrive, become merged ticks in tick order.
 *
 * Invariant: a tick goes out once, when every partition of TM_EVENTS has been reported past its end
 * (the minimum over upstream workers, as a keyed stream's watermark after a shuffle), or has not
 * been heard of for `idleTimeoutMs` of the caller's clock while others went on (a vanished worker:
 * the idleness rule, judged on wall time as Flink's `withIdleness`: the log time of a batch that
 * covers a long quiet interval jumps, and must not make the others look silent); its aggregates are merged per (slice length, slice start, group key) and
 * listed in that order, so the merged tick does not depend on how partitions are spread over
 * workers nor on arrival order. A batch whose every partition is already reported to its end is a
 * duplicate (a restarted worker's replay) and changes nothing.
 *
 * Pure: no I/O, no clock.
 */
import type { PartialBatch, PartitionProgress } from "../../protocol.js";
import type { Aggregate, AggregateKind } from "../windows/aggregate.js";
import { base64, unbase64 } from "../snapshot/base64.js";
import { partialKeyOf as keyOf } from "./partial-accumulator.js";
import type { PartialTick } from "../types.js";
import { silentSince } from "../watermarks/silence.js";

export type OfferOutcome = "accepted" | "duplicate" | "overlap";

interface OpenTick {
  clocks: PartitionProgress[];
  deltas: Map<string, { sliceMs: number; sliceStart: number; service: string; agg: Aggregate }>;
}

/** What the aligner keeps across a checkpoint (JSON; aggregates as base64). */
export interface TickAlignerState {
  reportedTo: (number | null)[];
  workers: (string | null)[];
  /** The end of the ticks released (the merge's log time), null: none yet. */
  releasedTo: number | null;
  open: { at: number; clocks: PartitionProgress[]; deltas: [number, number, string, string][] }[];
}

export class TickAligner {
  /** Per partition: the end of the last interval reported (−Infinity: none yet). */
  private readonly reportedTo: Float64Array;
  /** Per partition: the worker that reported it last. */
  private readonly workers: (string | null)[];
  private readonly open = new Map<number, OpenTick>();
  /** Per partition: the caller's clock when it was last reported (−Infinity: never). */
  private readonly heardAt: Float64Array;
  /** The caller's clock at the first report of any partition. */
  private firstHeard = -Infinity;
  private now = -Infinity;
  private maxReported = -Infinity;
  /** The end of the ticks released so far: the merge's log time. */
  private releasedTo = -Infinity;

  constructor(
    partitionCount: number,
    private readonly kind: AggregateKind,
    private readonly idleTimeoutMs: number,
  ) {
    this.reportedTo = new Float64Array(partitionCount).fill(-Infinity);
    this.workers = new Array<string | null>(partitionCount).fill(null);
    this.heardAt = new Float64Array(partitionCount).fill(-Infinity);
  }

  /** Takes one batch (decoded, checked) at the caller's clock `now` (ms); its aggregates are decoded here. */
  offer(b: PartialBatch, now: number): OfferOutcome {
    this.now = Math.max(this.now, now);
    const parts = b.partitions.filter((p) => p < this.reportedTo.length);
    if (parts.every((p) => (this.reportedTo[p] as number) >= b.to)) return "duplicate";
    if (parts.some((p) => (this.reportedTo[p] as number) > b.from)) return "overlap";
    if (this.firstHeard === -Infinity) this.firstHeard = now;
    for (const p of parts) {
      this.heardAt[p] = now;
      this.reportedTo[p] = b.to;
      this.workers[p] = b.worker;
    }
    if (b.to > this.maxReported) this.maxReported = b.to;
    if (b.clocks.length > 0 || b.deltas.length > 0) this.add(b);
    return "accepted";
  }

  /** The ticks now complete, in order, and the log time the merge may move to after them (null: none). */
  release(now: number): { ticks: PartialTick[]; logTime: number | null } {
    this.now = Math.max(this.now, now);
    const until = this.bound();
    if (until === null || until <= this.releasedTo) return { ticks: [], logTime: null };
    const ticks: PartialTick[] = [];
    for (const at of [...this.open.keys()].sort((a, b) => a - b)) {
      if (at >= until) break;
      ticks.push(this.tickOf(at, this.open.get(at) as OpenTick));
      this.open.delete(at);
    }
    this.releasedTo = until;
    return { ticks, logTime: until };
  }

  /** The partition holding the merge back, with the worker that reported it last (null: none). */
  heldBackBy(): { partition: number; worker: string | null; reportedTo: number | null } | null {
    let min = -1;
    for (let p = 0; p < this.reportedTo.length; p++)
      if (!this.silent(p) && (min < 0 || (this.reportedTo[p] as number) < (this.reportedTo[min] as number))) min = p;
    if (min < 0 || (this.reportedTo[min] as number) >= this.maxReported) return null;
    const to = this.reportedTo[min] as number;
    return { partition: min, worker: this.workers[min] ?? null, reportedTo: Number.isFinite(to) ? to : null };
  }

  /** The end of the interval reported for partition `p`, null: none yet. */
  reportedEnd(p: number): number | null {
    const v = this.reportedTo[p];
    return v !== undefined && Number.isFinite(v) ? v : null;
  }

  /** The worker that last reported partition `p`, null: none yet. */
  reportedBy(p: number): string | null {
    return this.workers[p] ?? null;
  }

  /** The furthest end reported over all partitions, null: none yet. */
  get furthest(): number | null {
    return Number.isFinite(this.maxReported) ? this.maxReported : null;
  }

  /** True when partition `p` is left out as silent (idleness, on the caller's clock). */
  isSilent(p: number): boolean {
    return this.silent(p);
  }

  /** Ticks waiting for a slower worker. */
  get waiting(): number {
    return this.open.size;
  }

  state(): TickAlignerState {
    const orNull = (v: number): number | null => (Number.isFinite(v) ? v : null);
    return {
      reportedTo: [...this.reportedTo].map(orNull),
      workers: [...this.workers],
      releasedTo: orNull(this.releasedTo),
      open: [...this.open].map(([at, t]) => ({
        at,
        clocks: t.clocks,
        deltas: [...t.deltas.values()].map((d) => [d.sliceMs, d.sliceStart, d.service, base64(d.agg.encode())]),
      })),
    };
  }

  /**
   * Takes back a state at the caller's clock `now`: every partition reported counts as heard of
   * now, so none is judged silent for time the merge stage itself was down.
   */
  restore(s: TickAlignerState, now: number): void {
    s.reportedTo.forEach((v, i) => {
      this.reportedTo[i] = v ?? -Infinity;
      if (v !== null) this.heardAt[i] = now;
    });
    s.workers.forEach((w, i) => (this.workers[i] = w));
    this.maxReported = Math.max(...this.reportedTo);
    this.releasedTo = s.releasedTo ?? -Infinity;
    this.firstHeard = now;
    this.now = now;
    for (const t of s.open) {
      const deltas: OpenTick["deltas"] = new Map();
      for (const [sliceMs, sliceStart, service, bytes] of t.deltas)
        deltas.set(keyOf(sliceMs, sliceStart, service), {
          sliceMs,
          sliceStart,
          service,
          agg: this.kind.decode(unbase64(bytes)),
        });
      this.open.set(t.at, { clocks: t.clocks, deltas });
    }
  }

  private add(b: PartialBatch): void {
    let t = this.open.get(b.from);
    if (t === undefined) this.open.set(b.from, (t = { clocks: [], deltas: new Map() }));
    t.clocks.push(...b.clocks);
    for (const d of b.deltas) {
      const key = keyOf(d.sliceMs, d.sliceStart, d.service);
      const agg = this.kind.decode(d.aggregate);
      const have = t.deltas.get(key);
      if (have === undefined)
        t.deltas.set(key, { sliceMs: d.sliceMs, sliceStart: d.sliceStart, service: d.service, agg });
      else have.agg.merge(agg);
    }
  }

  /** The smallest end reported over the partitions not silent; null until one was reported. */
  private bound(): number | null {
    let min = Infinity;
    for (let p = 0; p < this.reportedTo.length; p++)
      if (!this.silent(p) && (this.reportedTo[p] as number) < min) min = this.reportedTo[p] as number;
    return min === Infinity || min === -Infinity ? null : min;
  }

  /** Behind the others and not heard of for idleTimeout of the caller's clock (never reported: since the first report of any). */
  private silent(p: number): boolean {
    if ((this.reportedTo[p] as number) >= this.maxReported) return false;
    const heard = this.heardAt[p] as number;
    return silentSince(heard === -Infinity ? this.firstHeard : heard, this.now, this.idleTimeoutMs);
  }

  private tickOf(at: number, t: OpenTick): PartialTick {
    const deltas = [...t.deltas.values()].sort(
      (a, b) =>
        a.sliceMs - b.sliceMs ||
        a.sliceStart - b.sliceStart ||
        (a.service < b.service ? -1 : a.service > b.service ? 1 : 0),
    );
    const clocks = [...t.clocks].sort((a, b) => a.partition - b.partition);
    return { at, clocks, deltas };
  }
}
