/**
 * Gathering and splitting the open ticks of stage-1 partial accumulators when a worker restores from
 * checkpoints other workers wrote (docs/decisions/0057-elastic-workers.md). Each old worker's
 * state is one or more parts: its main open tick over its partitions, and any part still behind in
 * it (catch-up-accumulator.ts). A part's per-lane clocks go with their partitions to whichever
 * worker now owns them; its aggregates (summed over its lanes, so not splittable) go to one worker,
 * the one restoring the part's smallest partition from it (the carrier), so they are published
 * exactly once. Parts of the newest open tick become the main tick; older ones stay behind until
 * their log time reaches it.
 *
 * Pure: no I/O.
 */
import { base64, unbase64 } from "../snapshot/base64.js";
import type { AggregateKind } from "../windows/aggregate.js";
import type { BehindPartState, PartialAccumulatorState } from "./partial-accumulator.js";
import { partialKeyOf } from "./partial-accumulator.js";

/** One old worker's accumulator state and the partitions its lanes were. */
export interface AccumulatorPart {
  state: PartialAccumulatorState;
  /** The old worker's partitions, in its lane order. */
  partitions: readonly number[];
  /** Those this worker restores from this state. */
  mine: readonly number[];
}

/** The open tick of a worker owning `partitions` (lane order) restored from `parts`. */
export function restoreAccumulators(
  partitions: readonly number[],
  parts: readonly AccumulatorPart[],
  kind: AggregateKind,
): PartialAccumulatorState {
  const flat = parts.flatMap(flatten).filter((p) => p.partitions.some((x) => p.mine.includes(x)));
  const froms = flat.map((p) => p.from).filter((f): f is number => f !== null);
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
  const behind: BehindPartState[] = [];
  for (const part of flat) {
    const mine = part.partitions.filter((p) => part.mine.includes(p));
    const carrier = part.mine.includes(Math.min(...part.partitions));
    if (part.from !== null && from !== null && part.from < from) {
      behind.push(behindOf(part, mine, carrier));
      continue;
    }
    for (const p of mine) {
      const old = part.partitions.indexOf(p);
      const lane = partitions.indexOf(p);
      state.maxTs[lane] = part.maxTs[old] ?? null;
      state.lastEventAt[lane] = part.lastEventAt[old] ?? null;
      state.events[lane] = part.events[old] ?? 0;
    }
    if (carrier) for (const d of part.deltas) addDelta(deltas, d, kind);
  }
  state.deltas = [...deltas.values()];
  return behind.length === 0 ? state : { ...state, behind };
}

/** A part: an open tick over some partitions (lane order), with the partitions restored from it. */
interface Flat extends BehindPartState {
  mine: readonly number[];
}

/** An old worker's main tick (over its partitions not behind) and its parts behind. */
function flatten(p: AccumulatorPart): Flat[] {
  const { behind, ...main } = p.state;
  const gone = new Set((behind ?? []).flatMap((b) => b.partitions));
  const lanes = p.partitions.flatMap((x, i) => (gone.has(x) ? [] : [i]));
  const pick = <T>(xs: readonly T[]): T[] => lanes.map((i) => xs[i] as T);
  const own: Flat = {
    ...main,
    partitions: pick(p.partitions),
    maxTs: pick(main.maxTs),
    lastEventAt: pick(main.lastEventAt),
    events: pick(main.events),
    mine: p.mine,
  };
  return [own, ...(behind ?? []).map((b) => ({ ...b, mine: p.mine }))];
}

function behindOf(part: Flat, mine: readonly number[], carrier: boolean): BehindPartState {
  const lane = (p: number): number => part.partitions.indexOf(p);
  return {
    from: part.from,
    partitions: [...mine],
    maxTs: mine.map((p) => part.maxTs[lane(p)] ?? null),
    lastEventAt: mine.map((p) => part.lastEventAt[lane(p)] ?? null),
    events: mine.map((p) => part.events[lane(p)] ?? 0),
    deltas: carrier ? part.deltas : [],
  };
}

function addDelta(
  into: Map<string, [number, number, string, string]>,
  d: [number, number, string, string],
  kind: AggregateKind,
): void {
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
