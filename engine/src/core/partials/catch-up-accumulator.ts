/**
 * A worker's stage-1 accumulator when some of its partitions were restored from a worker whose log
 * time was behind the others' (docs/decisions/0057-elastic-workers.md): those partitions' open tick
 * goes on apart, as it would have in that worker, until their log time reaches the main open tick;
 * then it goes out as [its start, the main tick's start) and they go into the main accumulator.
 * Meanwhile the main accumulator's batches report only its own partitions, so every partition is
 * reported to the merge stage in order, each record in the tick of its interleaved ingest_ts, as a
 * straight run would (tick-aligner.ts: no gap, no overlap). With no part behind (the usual case) it
 * is the plain accumulator with one test per record.
 *
 * Pure: no I/O, no clock.
 */
import type { TelemetryEvent } from "../../protocol.js";
import {
  PartialAccumulator,
  type BehindPartState,
  type PartialAccumulatorOptions,
  type PartialAccumulatorState,
} from "./partial-accumulator.js";

interface Part {
  acc: PartialAccumulator;
  partitions: number[];
}

export class CatchUpAccumulator {
  private readonly main: PartialAccumulator;
  private readonly parts: (Part | null)[] = [];
  /** Per worker lane: the part it belongs to while that is behind (−1: the main accumulator); null: none behind. */
  private partOf: Int32Array | null = null;
  /** Per worker lane: its lane in its part. */
  private readonly inPart: Int32Array;

  constructor(
    private readonly o: PartialAccumulatorOptions,
    restored?: PartialAccumulatorState,
  ) {
    const { behind, ...main } = restored ?? { behind: undefined };
    this.main = new PartialAccumulator(o, restored === undefined ? undefined : (main as PartialAccumulatorState));
    this.inPart = new Int32Array(o.partitions.length);
    for (const b of behind ?? []) this.addPart(b);
    this.report();
  }

  /** A record of `lane`; `e.ingest_ts` is its interleaved ingest_ts. */
  event(lane: number, e: TelemetryEvent): void {
    const part = this.partOf === null ? -1 : (this.partOf[lane] as number);
    if (part >= 0 && this.behind(part, e.ingest_ts))
      (this.parts[part] as Part).acc.event(this.inPart[lane] as number, e);
    else this.main.event(lane, e);
  }

  /** A heartbeat of `lane` at interleaved ingest_ts `t`. */
  heartbeat(t: number, lane: number): void {
    const part = this.partOf === null ? -1 : (this.partOf[lane] as number);
    if (part >= 0 && this.behind(part, t)) (this.parts[part] as Part).acc.heartbeat(t);
    else this.main.heartbeat(t);
  }

  state(): PartialAccumulatorState {
    const behind = this.parts.flatMap((p) => (p === null ? [] : [{ ...p.acc.state(), partitions: [...p.partitions] }]));
    return behind.length === 0 ? this.main.state() : { ...this.main.state(), behind };
  }

  private addPart(b: BehindPartState): void {
    const { partitions, ...state } = b;
    const lanes = partitions.map((p) => this.o.partitions.indexOf(p));
    const delays = this.o.delays;
    const options: PartialAccumulatorOptions = {
      ...this.o,
      partitions,
      ...(delays ? { delays: (l: number) => delays(lanes[l] as number) } : {}),
    };
    const i = this.parts.length;
    this.parts.push({ acc: new PartialAccumulator(options, state), partitions });
    this.partOf ??= new Int32Array(this.o.partitions.length).fill(-1);
    lanes.forEach((lane, j) => {
      (this.partOf as Int32Array)[lane] = i;
      this.inPart[lane] = j;
    });
  }

  /** True while the part's log time is before the main open tick; at it, the part catches up. */
  private behind(part: number, t: number): boolean {
    const from = this.main.openFrom;
    if (from === null || t < from) return true;
    const p = this.parts[part] as Part;
    p.acc.flushTo(from);
    this.parts[part] = null;
    const partOf = this.partOf as Int32Array;
    for (let lane = 0; lane < partOf.length; lane++) if (partOf[lane] === part) partOf[lane] = -1;
    if (this.parts.every((x) => x === null)) this.partOf = null;
    this.report();
    return false;
  }

  /** The main accumulator reports the partitions of no part still behind. */
  private report(): void {
    const behind = new Set(this.parts.flatMap((p) => p?.partitions ?? []));
    this.main.reporting = this.o.partitions.filter((p) => !behind.has(p));
  }
}
