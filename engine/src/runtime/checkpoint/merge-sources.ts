/**
 * Which old merge operators' checkpoints a merge operator restores from when `mergePartitions`
 * changed (docs/decisions/0057-elastic-workers.md), over the checkpoints of its restore epoch or
 * a savepoint's. A key of merge partition m of M is in old partition m mod M₀ of M₀ when M₀ divides M
 * (growing: one file, the newest of that partition, in the newest layout that has one); when M
 * divides M₀ (shrinking), the keys of m are in every old partition m₀ with m₀ mod M = m, whose
 * files must be of one aligned checkpoint n — the newest n they all have, in the newest layout —
 * so their aligners agree (every merge operator aligns barrier n after the same batches).
 * Undefined: no such files. `gatherMergeStates` puts the states of such files together.
 */
import type { MergeConfig } from "../config/merge-config.js";
import type { TickAlignerState } from "../../core/partials/tick-aligner.js";
import type { MergeState } from "./merge-state.js";
import type { FoundCheckpoint } from "./restore-set.js";

/** A merge checkpoint's merge partition and their count (absent in its state: 0 of 1). */
export function mergeLayoutOf(f: FoundCheckpoint): { m: number; of: number } {
  const s = f.header.merge as MergeState;
  return { m: s.mergePartition ?? 0, of: s.mergePartitions ?? 1 };
}

export function newestOf(files: readonly FoundCheckpoint[]): FoundCheckpoint | undefined {
  return files.reduce<FoundCheckpoint | undefined>(
    (a, f) => (a === undefined || f.header.wallTime > a.header.wallTime ? f : a),
    undefined,
  );
}

/** The newest aligned checkpoint n that merge partitions `ms` of `of` all have a file of. */
export function newestCommonBarrier(
  files: readonly FoundCheckpoint[],
  of: number,
  ms: readonly number[],
): number | undefined {
  const barriers = ms.map(
    (m) =>
      new Set(
        files
          .filter((f) => mergeLayoutOf(f).of === of && mergeLayoutOf(f).m === m)
          .flatMap((f) => f.header.barrier ?? []),
      ),
  );
  const common = [...(barriers[0] ?? [])].filter((n) => barriers.every((b) => b.has(n)));
  return common.length === 0 ? undefined : Math.max(...common);
}

export function mergeSources(files: readonly FoundCheckpoint[], config: MergeConfig): FoundCheckpoint[] | undefined {
  const M = config.mergePartitions;
  const layouts = [...files].sort((a, b) => b.header.wallTime - a.header.wallTime).map((f) => mergeLayoutOf(f).of);
  const newestLayout = layouts[0];
  for (const of of new Set(layouts)) {
    const at = (m: number): FoundCheckpoint[] =>
      files.filter((x) => mergeLayoutOf(x).of === of && mergeLayoutOf(x).m === m);
    if (M % of === 0) {
      const from = newestOf(at(config.mergePartition % of));
      if (from !== undefined) return [from];
    } else if (of % M === 0 && of === newestLayout) {
      const needed = Array.from({ length: of }, (_, m) => m).filter((m) => m % M === config.mergePartition);
      const n = newestCommonBarrier(files, of, needed);
      if (n === undefined) return undefined;
      return needed.map((m) => newestOf(at(m).filter((f) => f.header.barrier === n)) as FoundCheckpoint);
    }
  }
  return undefined;
}

/**
 * Old merge operators' states of one aligned checkpoint n as one: their aligners agree on what every
 * partition reported (the same batches before each worker's barrier n), so the first one's progress
 * is taken and each held tick's aggregates (each operator's own keys) put together; it reads its
 * subject from the earliest sequence any of them had.
 */
export function gatherMergeStates(states: readonly MergeState[]): MergeState {
  const first = states[0] as MergeState;
  const open = new Map<number, TickAlignerState["open"][number]>();
  for (const s of states)
    for (const t of s.aligner.open) {
      const have = open.get(t.at);
      if (have === undefined) open.set(t.at, { ...t, deltas: [...t.deltas] });
      else have.deltas.push(...t.deltas);
    }
  return {
    seq: Math.min(...states.map((s) => s.seq)),
    aligner: { ...first.aligner, open: [...open.values()].sort((a, b) => a.at - b.at) },
    lastBarrier: Math.max(...states.map((s) => s.lastBarrier ?? 0)),
  };
}
