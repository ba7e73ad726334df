/**
 * A merge operator's cut (docs/decisions/0057-elastic-workers.md): in its restore epoch, its own
 * checkpoints when they were written for the same merge partition of the same `mergePartitions`
 * (the store chooses, as always); else the newest checkpoint of the merge partition its keys were
 * split from — the newest layout's merge operators in this data directory, or the savepoint that
 * began the epoch. Merge partitions grow by splitting: each key of a merge partition m of M was in
 * partition m mod M₀ of M₀ when M₀ divides M (protocol/merge-partitions.ts), so an operator restores
 * one old operator's state and emits only its own keys (merge/merge-keys.ts). Fewer merge
 * partitions, or a count M₀ does not divide, would gather several operators' states: refused, naming
 * what to do. A merge operator's state holds every TM_EVENTS partition, so the worker layout does not
 * matter to it.
 */
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import type { MergeConfig } from "../config/merge-config.js";
import { RuntimeError } from "../errors.js";
import { decodeCheckpoint } from "./checkpoint-codec.js";
import type { MergeState } from "./merge-state.js";
import type { CoreFactory, RoleCut } from "./restore-plan.js";
import { roleEpoch } from "./restore-epoch.js";
import type { FoundCheckpoint } from "./restore-set.js";
import { savepointCheckpoints } from "./savepoint.js";
import { mergeStateFrame } from "./state-frames.js";

/** A merge checkpoint's merge partition and their count (absent in its state: 0 of 1). */
export function mergeLayoutOf(f: FoundCheckpoint): { m: number; of: number } {
  const s = f.header.merge as MergeState;
  return { m: s.mergePartition ?? 0, of: s.mergePartitions ?? 1 };
}

export async function planMergeCut(
  config: MergeConfig,
  factory: CoreFactory,
  log: Logger,
): Promise<RoleCut<MergeState>> {
  const { scan, restore } = await roleEpoch(config);
  const { epoch, savepoint: began } = restore;
  const merges = scan.found.filter((f) => f.header.merge !== undefined && (f.header.epoch ?? 0) === epoch);
  const other = merges.find((f) => f.header.partitionCount !== config.partitionCount);
  if (other)
    throw new RuntimeError(
      "TM_PARTITION_COUNT_CHANGED",
      `checkpoint ${other.file} was written with partitionCount ${other.header.partitionCount}, but this merge operator runs with ${config.partitionCount}; ` +
        `start with partitionCount ${other.header.partitionCount} again, or use a fresh --data directory`,
    );
  const mine = (f: FoundCheckpoint): boolean => {
    const l = mergeLayoutOf(f);
    return l.m === config.mergePartition && l.of === config.mergePartitions;
  };
  const own = newest(merges.filter((f) => f.operator === config.worker));
  if (own !== undefined && mine(own)) return { epoch: restore, kind: "same" };
  // A worker's checkpoints under this id: the store's own step refuses them, naming why.
  if (scan.found.some((f) => f.operator === config.worker && f.header.merge === undefined))
    return { epoch: restore, kind: "same" };
  let from = splitSource(merges, config);
  let label = "the merge stage's newest checkpoints";
  if (from === undefined && began !== undefined) {
    const sp = await savepointCheckpoints(began);
    const files = sp.found.filter((f) => f.header.merge !== undefined);
    from = splitSource(files, config);
    label = sp.label;
    if (from === undefined && files.length > 0) throw cannotSplit(files, config);
  }
  if (from === undefined) {
    if (merges.length === 0) return { epoch: restore, kind: "fresh" };
    throw cannotSplit(merges, config);
  }
  const cp = decodeCheckpoint(await readFile(from.file), from.file);
  const state = mergeStateFrame.read(cp.header, from.file);
  const core = factory.restore(config.core, cp.snapshot);
  const { m, of } = mergeLayoutOf(from);
  const cut = `${label}: merge partition ${m} of ${of}`;
  log.info({ file: from.file, cut, epoch }, `restored from ${cut}`);
  const restoredCut = {
    cut,
    files: [{ file: from.file, partitions: [...cp.header.partitions] }],
    fresh: [],
    resumeAfter: {},
  };
  const loaded = { checkpoint: undefined, file: from.file, skipped: scan.unreadable, cut: restoredCut };
  return { epoch: restore, kind: "cut", loaded, restored: { state, core, logTime: cp.header.logTime } };
}

function newest(files: readonly FoundCheckpoint[]): FoundCheckpoint | undefined {
  return files.reduce<FoundCheckpoint | undefined>(
    (a, f) => (a === undefined || f.header.wallTime > a.header.wallTime ? f : a),
    undefined,
  );
}

/**
 * The newest checkpoint of the merge partition this operator's keys were split from, in the newest
 * layout that has one (a count dividing this one's); undefined when none.
 */
function splitSource(files: readonly FoundCheckpoint[], config: MergeConfig): FoundCheckpoint | undefined {
  const byLayout = [...files].sort((a, b) => b.header.wallTime - a.header.wallTime);
  for (const f of byLayout) {
    const { of } = mergeLayoutOf(f);
    if (config.mergePartitions % of !== 0) continue;
    const m = config.mergePartition % of;
    const from = newest(files.filter((x) => mergeLayoutOf(x).of === of && mergeLayoutOf(x).m === m));
    if (from !== undefined) return from;
  }
  return undefined;
}

function cannotSplit(files: readonly FoundCheckpoint[], config: MergeConfig): RuntimeError {
  const counts = [...new Set(files.map((f) => mergeLayoutOf(f).of))].join(", ");
  const M = config.mergePartitions;
  return new RuntimeError(
    "TM_CHECKPOINT_UNCOVERED",
    `the merge stage's state was written with mergePartitions ${counts}, and merge partition ${config.mergePartition} of ${M} ` +
      `has no checkpoint to split from: merge partitions grow by splitting, to a multiple of the old count (fewer would gather ` +
      `several operators' state). Start with mergePartitions ${counts}, or restore from a savepoint (--from-savepoint DIR), ` +
      `or use a fresh --data directory for the merge stage`,
  );
}
