/**
 * Joining and splitting the open ticks of stage-1 partial accumulators when a worker restores from
 * checkpoints another layout wrote (docs/decisions/0057-elastic-workers.md). Each part is one old
 * worker's open tick: its per-lane clocks go with their partitions to whichever worker now owns
 * them; its aggregates (summed over that old worker's lanes, so not splittable) go to one worker,
 * the one restoring the old worker's smallest partition from it (the carrier), so they are
 * published exactly once. Parts whose tick is older than the newest part's go out first as catch-up
 * batches [their tick, the newest tick), for their partitions, before any input: the merge stage's
 * aligner then sees every partition reported without a gap or an overlap (tick-aligner.ts).
 *
 * Pure: no I/O.
 */
import type { PartitionProgress } from "../../protocol.js";
import { base64, unbase64 } from "../snapshot/base64.js";
import type { AggregateKind } from "../windows/aggregate.js";
import type { PartialAccumulatorState } from "./partial-accumulator.js";
import { partialKeyOf } from "./partial-accumulator.js";

/** One old worker's open tick and the partitions its lanes were. */
export interface AccumulatorPart {
  state: PartialAccumulatorState;
  /** The old worker's partitions, in its lane order. */
  partitions: readonly number[];
  /** Those restored by this worker from this part. */
  mine: readonly number[];
  /** True when this worker publishes the part's aggregates (it owns the old worker's smallest partition). */
  carrier: boolean;
}

/** A batch of an older tick, to publish before any input. */
export interface CatchUpBatch {
  from: number;
  to: number;
  /** The partitions it reports to `to`: the part's partitions this worker owns. */
  partitions: number[];
  clocks: PartitionProgress[];
  deltas: { sliceMs: number; sliceStart: number; service: string; aggregate: Uint8Array }[];
}

export interface JoinedAccumulator {
  state: PartialAccumulatorState;
  catchUp: CatchUpBatch[];
}

/** The open tick of a worker owning `partitions` (lane order) restored from `parts`. */
export function joinAccumulators(
  partitions: readonly number[],
  parts: readonly AccumulatorPart[],
  kind: AggregateKind,
): JoinedAccumulator {
  const froms = parts.map((p) => p.state.from).filter((f): f is number => f !== null);
  const from = froms.length === 0 ? null : Math.max(...froms);
  const n = partitions.length;
  const state: PartialAccumulatorState = {
    from,
    maxTs: new Array<number | null>(n).fill(null),
    lastEventAt: new Array<number | null>(n).fill(null),
    events: new Array<number>(n).fill(0),
    deltas: [],
  };
  const deltas = new Map<string, [number, number, string, string]>();
  const catchUp: CatchUpBatch[] = [];
  for (const part of parts) {
    const mine = part.mine;
    const behind = part.state.from !== null && from !== null && part.state.from < from;
    if (behind) {
      catchUp.push(catchUpOf(part, mine, from as number));
      continue;
    }
    for (const p of mine) {
      const old = part.partitions.indexOf(p);
      const lane = partitions.indexOf(p);
      state.maxTs[lane] = part.state.maxTs[old] ?? null;
      state.lastEventAt[lane] = part.state.lastEventAt[old] ?? null;
      state.events[lane] = part.state.events[old] ?? 0;
    }
    if (part.carrier) for (const d of part.state.deltas) addDelta(deltas, d, kind);
  }
  state.deltas = [...deltas.values()];
  return { state, catchUp };
}

function catchUpOf(part: AccumulatorPart, mine: readonly number[], to: number): CatchUpBatch {
  const clocks: PartitionProgress[] = [];
  for (const p of mine) {
    const old = part.partitions.indexOf(p);
    const events = part.state.events[old] ?? 0;
    if (events === 0) continue;
    clocks.push({
      partition: p,
      maxTs: part.state.maxTs[old] as number,
      lastEventAt: part.state.lastEventAt[old] as number,
      events,
    });
  }
  const deltas = part.carrier
    ? part.state.deltas.map(([sliceMs, sliceStart, service, bytes]) => ({ sliceMs, sliceStart, service, aggregate: unbase64(bytes) }))
    : [];
  return { from: part.state.from as number, to, partitions: [...mine], clocks, deltas };
}

function addDelta(into: Map<string, [number, number, string, string]>, d: [number, number, string, string], kind: AggregateKind): void {
  const key = partialKeyOf(d[0], d[1], d[2]);
  const have = into.get(key);
  if (have === undefined) {
    into.set(key, d);
    return;
  }
  const agg = kind.decode(unbase64(have[3]));
  agg.merge(kind.decode(unbase64(d[3])));
  into.set(key, [d[0], d[1], d[2], base64(agg.encode())]);
}
