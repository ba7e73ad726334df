/**
 * Stage 1 of the two-stage dataflow (docs/decisions/0029-two-stage-dataflow.md): beside the core,
 * a worker folds every record it releases into the aggregate of its tick (`tickMs` of log time, on
 * the grid of multiples of tickMs), per slice of each slice grid, under the all-services key (and,
 * with `serviceKeys`, under its service too: docs/decisions/0032-partition-by-route.md). When
 * log time reaches a later tick, the open tick goes out as one PartialBatch covering [its start,
 * the new tick's start): the ticks in between held no record.
 *
 * Invariant: every record released to the core is in exactly one batch, the one of the tick its
 * interleaved ingest_ts falls in, and batches cover the worker's log time without gap or overlap; the
 * state (`state()`) is what a checkpoint needs to emit the very same batches after a restore.
 *
 * Pure: no I/O, no clock.
 */
import {
  ALL_SERVICES,
  isError,
  type PartialBatch,
  type PartitionProgress,
  type TelemetryEvent,
} from "../../protocol.js";
import { RequestInput } from "@tidemark/sketches";
import type { Aggregate, AggregateKind } from "../windows/aggregate.js";
import { base64, unbase64 } from "../snapshot/base64.js";

/** What a checkpoint keeps of an accumulator (JSON; aggregates as base64). */
export interface PartialAccumulatorState {
  from: number | null;
  /**
   * Parts restored from other workers' checkpoints whose log time is still behind this one's open
   * tick (catch-up-accumulator.ts): each its own open tick over its partitions, until it catches up.
   */
  behind?: BehindPartState[];
  /** Per lane: largest event time and interleaved ingest_ts of its last record (null: none yet). */
  maxTs: (number | null)[];
  lastEventAt: (number | null)[];
  /** Per lane: its records in the open tick. */
  events: number[];
  deltas: [number, number, string, string][];
}

export interface PartialAccumulatorOptions {
  worker: string;
  /** TM_EVENTS partition of each lane. */
  partitions: readonly number[];
  tickMs: number;
  /** Distinct slice lengths of the core's slice grids. */
  sliceMs: readonly number[];
  kind: AggregateKind;
  /** The aggregates' DDSketch accuracy (the core's `relativeAccuracy`): a record's bin key is derived once at it. */
  relativeAccuracy?: number;
  /** Also one aggregate per service (partitioning by service and route: the merge stage makes the service panes). */
  serviceKeys?: boolean;
  /**
   * Lane → its delay quantiles per percentile-watermark policy as the core beside holds them
   * (`StreamCore.delayQuantiles`), carried in each batch (`PartitionProgress.delays`) for the merge
   * stage's watermark. Called when a batch is cut, before the core sees the record that cuts it.
   */
  delays?: (lane: number) => Record<string, number> | undefined;
  emit: (batch: PartialBatch) => void;
}

/** A part still behind: its open tick and the TM_EVENTS partitions of its lanes. */
export interface BehindPartState extends Omit<PartialAccumulatorState, "behind"> {
  partitions: number[];
}

interface Delta {
  sliceMs: number;
  sliceStart: number;
  service: string;
  agg: Aggregate;
}

export class PartialAccumulator {
  /** Start of the open tick (−Infinity before the first input). */
  private from = -Infinity;
  private readonly deltas = new Map<string, Delta>();
  private readonly maxTs: Float64Array;
  private readonly lastEventAt: Float64Array;
  private readonly events: Uint32Array;
  /** Per slice length: the delta the last record went to (a record's slice rarely changes: no key string per record). */
  private readonly last: (Delta | undefined)[];
  /** The same for the service keys (serviceKeys only). */
  private readonly lastService: (Delta | undefined)[];
  /**
   * Per slice length: the open tick's all-services deltas by slice start. Late records move between
   * slices often; found by number, a slice change builds no key string.
   */
  private readonly allBySlice: Map<number, Delta>[];
  /** The record's inputs, derived once for the aggregates it goes into (set per record, no allocation). */
  private readonly input: RequestInput;
  /** The partitions its batches report (all its lanes', but those of parts still behind: catch-up-accumulator.ts). */
  reporting: readonly number[];

  constructor(
    private readonly o: PartialAccumulatorOptions,
    restored?: PartialAccumulatorState,
  ) {
    const n = o.partitions.length;
    this.maxTs = new Float64Array(n).fill(-Infinity);
    this.lastEventAt = new Float64Array(n).fill(-Infinity);
    this.events = new Uint32Array(n);
    this.last = o.sliceMs.map(() => undefined);
    this.lastService = o.sliceMs.map(() => undefined);
    this.allBySlice = o.sliceMs.map(() => new Map<number, Delta>());
    this.input = new RequestInput(o.relativeAccuracy);
    this.reporting = o.partitions;
    if (restored !== undefined) this.restore(restored);
  }

  /** Start of the open tick (null before the first input). */
  get openFrom(): number | null {
    return Number.isFinite(this.from) ? this.from : null;
  }

  /** The open tick goes out as [its start, `to`) when it starts before `to`; the next opens at `to`. */
  flushTo(to: number): void {
    if (this.from === -Infinity || this.from >= to) return;
    this.o.emit(this.batch(to));
    this.reset(to);
  }

  /** A record of `lane`; `e.ingest_ts` is its interleaved ingest_ts. */
  event(lane: number, e: TelemetryEvent): void {
    const t = e.ingest_ts;
    this.advance(t);
    if (e.ts > (this.maxTs[lane] as number)) this.maxTs[lane] = e.ts;
    this.lastEventAt[lane] = t;
    this.events[lane] = (this.events[lane] as number) + 1;
    const input = this.input.set(e.latency_ms, isError(e.status), this.o.kind.hashUser(e.user));
    const lengths = this.o.sliceMs;
    for (let i = 0; i < lengths.length; i++) {
      const sliceMs = lengths[i] as number;
      const sliceStart = Math.floor(e.ts / sliceMs) * sliceMs;
      let d = this.last[i];
      if (d?.sliceStart !== sliceStart) this.last[i] = d = this.allServices(i, sliceMs, sliceStart);
      d.agg.addInput(input);
      if (!this.o.serviceKeys) continue;
      let s = this.lastService[i];
      if (s?.sliceStart !== sliceStart || s.service !== e.service)
        this.lastService[i] = s = this.delta(sliceMs, sliceStart, e.service);
      s.agg.addInput(input);
    }
  }

  /** A heartbeat of any lane at interleaved ingest_ts `t`. */
  heartbeat(t: number): void {
    this.advance(t);
  }

  state(): PartialAccumulatorState {
    const orNull = (v: number): number | null => (Number.isFinite(v) ? v : null);
    return {
      from: orNull(this.from),
      maxTs: [...this.maxTs].map(orNull),
      lastEventAt: [...this.lastEventAt].map(orNull),
      events: [...this.events],
      deltas: [...this.deltas.values()].map((d) => [d.sliceMs, d.sliceStart, d.service, base64(d.agg.encode())]),
    };
  }

  /** Log time reached `t`: the open tick goes out if `t` is in a later one. */
  private advance(t: number): void {
    const tickMs = this.o.tickMs;
    const tick = Math.floor(t / tickMs) * tickMs;
    if (this.from === -Infinity) this.from = tick;
    if (tick <= this.from) return;
    this.o.emit(this.batch(tick));
    this.reset(tick);
  }

  private reset(tick: number): void {
    this.from = tick;
    this.deltas.clear();
    this.last.fill(undefined);
    this.lastService.fill(undefined);
    for (const bySlice of this.allBySlice) bySlice.clear();
    this.events.fill(0);
  }

  private batch(to: number): PartialBatch {
    const clocks: PartitionProgress[] = [];
    this.o.partitions.forEach((partition, lane) => {
      const events = this.events[lane] as number;
      if (events === 0) return;
      const clock: PartitionProgress = {
        partition,
        maxTs: this.maxTs[lane] as number,
        lastEventAt: this.lastEventAt[lane] as number,
        events,
      };
      const delays = this.o.delays?.(lane);
      if (delays !== undefined) clock.delays = delays;
      clocks.push(clock);
    });
    return {
      worker: this.o.worker,
      partitions: [...this.reporting],
      tickMs: this.o.tickMs,
      from: this.from,
      to,
      clocks,
      deltas: [...this.deltas.values()].map((d) => ({
        sliceMs: d.sliceMs,
        sliceStart: d.sliceStart,
        service: d.service,
        aggregate: d.agg.encode(),
      })),
    };
  }

  /** The all-services delta of a slice in the open tick (a restored one is found through `delta`). */
  private allServices(i: number, sliceMs: number, sliceStart: number): Delta {
    const bySlice = this.allBySlice[i] as Map<number, Delta>;
    let d = bySlice.get(sliceStart);
    if (d === undefined) bySlice.set(sliceStart, (d = this.delta(sliceMs, sliceStart, ALL_SERVICES)));
    return d;
  }

  private delta(sliceMs: number, sliceStart: number, service: string): Delta {
    const id = partialKeyOf(sliceMs, sliceStart, service);
    let d = this.deltas.get(id);
    if (d === undefined) this.deltas.set(id, (d = { sliceMs, sliceStart, service, agg: this.o.kind.create() }));
    return d;
  }

  private restore(s: PartialAccumulatorState): void {
    this.from = s.from ?? -Infinity;
    s.maxTs.forEach((v, i) => (this.maxTs[i] = v ?? -Infinity));
    s.lastEventAt.forEach((v, i) => (this.lastEventAt[i] = v ?? -Infinity));
    s.events.forEach((v, i) => (this.events[i] = v));
    for (const [sliceMs, sliceStart, service, bytes] of s.deltas)
      this.deltas.set(partialKeyOf(sliceMs, sliceStart, service), {
        sliceMs,
        sliceStart,
        service,
        agg: this.o.kind.decode(unbase64(bytes)),
      });
  }
}

/** The key of a tick's aggregate of one slice and group key (the aligner merges by it too). */
export function partialKeyOf(sliceMs: number, sliceStart: number, service: string): string {
  return `${sliceMs}|${sliceStart}|${service}`;
}
