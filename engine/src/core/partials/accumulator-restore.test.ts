/**
 * Stage-1 accumulators restored at another parallelism (accumulator-restore.ts,
 * catch-up-accumulator.ts; docs/decisions/0057-elastic-workers.md): one worker's open tick split
 * between two, two workers' open ticks gathered into one — one of them behind the other by several
 * ticks — and a gathered state split again while a part is still behind. In every case the merge
 * stage's panes are byte for byte a straight run's (the old workers' batches before the new ones',
 * as a restart publishes them): each record lands in the tick of its ingest_ts,
 * every partition is reported without gap or overlap, and each aggregate is published once.
 */
import { describe, it } from "vitest";
import {
  decodePartialBatch,
  encodePartialBatch,
  partitionOf,
  type PartialBatch,
  type TelemetryEvent,
} from "../../protocol.js";
import { coreAggregates, partialSliceLengths } from "../create-core.js";
import { config, expectSamePanes, interleave, P, stageTwo, stream, TICK } from "../__fixtures__/two-stage.js";
import { restoreAccumulators, type AccumulatorPart } from "./accumulator-restore.js";
import { CatchUpAccumulator } from "./catch-up-accumulator.js";
import type { PartialAccumulatorState } from "./partial-accumulator.js";

const cfg = config();
const kind = coreAggregates(cfg);
const events = stream(12_000, 21);
const END = (events.at(-1) as TelemetryEvent).ingest_ts + 200_000;
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** A worker's accumulator and what it published. */
class Worker {
  readonly out: PartialBatch[] = [];
  readonly acc: CatchUpAccumulator;

  constructor(
    readonly partitions: number[],
    restored?: PartialAccumulatorState,
  ) {
    this.acc = new CatchUpAccumulator(
      {
        worker: `w${partitions.join("")}`,
        partitions,
        tickMs: TICK,
        sliceMs: partialSliceLengths(cfg),
        kind,
        emit: (b) => this.out.push(decodePartialBatch(encodePartialBatch(b))),
      },
      restored,
    );
  }

  /** Events `from` ≤ i < `to`: its own as records of their lane, the others' as a heartbeat of its lane 0. */
  feed(from: number, to: number, skip: (i: number, p: number) => boolean = () => false): this {
    for (let i = from; i < to; i++) {
      const e = events[i] as TelemetryEvent;
      const p = partitionOf(e.service, P);
      const lane = this.partitions.indexOf(p);
      if (skip(i, p)) continue;
      if (lane >= 0) this.acc.event(lane, e);
      else this.acc.heartbeat(e.ingest_ts, 0);
    }
    return this;
  }

  end(): this {
    this.acc.heartbeat(END, 0);
    return this;
  }
}

/** `partitions` restored from the workers `from`, each taking the partitions it holds. */
function restoreFrom(partitions: number[], from: Worker[]): Worker {
  const parts: AccumulatorPart[] = from.map((w) => ({
    state: w.acc.state(),
    partitions: w.partitions,
    mine: w.partitions.filter((p) => partitions.includes(p)),
  }));
  return new Worker(partitions, restoreAccumulators(partitions, parts, kind));
}

describe("stage-1 accumulators restored at another parallelism", () => {
  const straight = stageTwo(interleave([new Worker(range(0, 7)).feed(0, events.length).end().out]), cfg);

  it("split: one worker's open tick goes on in two", () => {
    const cut = 5_001;
    const one = new Worker(range(0, 7)).feed(0, cut);
    const low = restoreFrom(range(0, 3), [one]).feed(cut, events.length).end();
    const high = restoreFrom(range(4, 7), [one]).feed(cut, events.length).end();
    expectSamePanes(stageTwo([...one.out, ...interleave([low.out, high.out])], cfg), straight);
  });

  it("gather: two workers' open ticks, one several ticks behind, go on in one", () => {
    const [cutA, cutB] = [4_000, 4_600];
    const a = new Worker(range(0, 3)).feed(0, cutA);
    const b = new Worker(range(4, 7)).feed(0, cutB);
    const gathered = restoreFrom(range(0, 7), [a, b]);
    // What b took in already is not read again; a's partitions go on from its own cut.
    gathered.feed(cutA, events.length, (i, p) => p >= 4 && i < cutB).end();
    expectSamePanes(stageTwo([...interleave([a.out, b.out]), ...gathered.out], cfg), straight);
  });

  it("a gathered state split again while a part is still behind", () => {
    const [cutA, cutB, cutJ] = [4_000, 4_600, 4_300];
    const a = new Worker(range(0, 3)).feed(0, cutA);
    const b = new Worker(range(4, 7)).feed(0, cutB);
    const gathered = restoreFrom(range(0, 7), [a, b]).feed(cutA, cutJ, (i, p) => p >= 4 && i < cutB);
    const skip = (i: number, p: number): boolean => p >= 4 && i < cutB;
    const x = restoreFrom([0, 1, 5], [gathered]).feed(cutJ, events.length, skip).end();
    const y = restoreFrom([2, 3, 4, 6, 7], [gathered]).feed(cutJ, events.length, skip).end();
    expectSamePanes(
      stageTwo([...interleave([a.out, b.out]), ...gathered.out, ...interleave([x.out, y.out])], cfg),
      straight,
    );
  });
});
