/**
 * A merge operator's cut (docs/decisions/0057-elastic-workers.md): in its restore epoch, its own
 * checkpoints when they were written for the same merge partition of the same `mergePartitions`
 * (the store chooses, as always); else the newest checkpoint of the merge partition its keys were
 * split from or gathered from (merge-sources.ts) — the merge operators' newest in this data
 * directory, or the savepoint that began the epoch. Grown to a multiple of the old count, an
 * operator restores one old operator's state and emits only its own keys (merge/merge-keys.ts);
 * shrunk to a divisor, it restores several old operators' states of one aligned checkpoint, their
 * cores as groups (core/grouped/merge-groups.ts). Any other count is refused, naming what to do. A
 * merge operator's state holds every TM_EVENTS partition, so the worker layout does not matter to it.
 */
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import type { MergeConfig } from "../config/merge-config.js";
import { RuntimeError } from "../errors.js";
import { decodeCheckpoint, type Checkpoint } from "./checkpoint-codec.js";
import { decodeGroupContainer } from "../../core/grouped/group-container.js";
import { MergeGroups } from "../../core/grouped/merge-groups.js";
import { gatherMergeStates, mergeLayoutOf, mergeSources, newestOf } from "./merge-sources.js";
import type { Restored } from "./state-frames.js";
import type { MergeState } from "./merge-state.js";
import type { CoreFactory, RoleCut } from "./restore-plan.js";
import { roleEpoch } from "./restore-epoch.js";
import type { FoundCheckpoint } from "./restore-set.js";
import { savepointCheckpoints } from "./savepoint.js";
import { mergeStateFrame } from "./state-frames.js";

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
  const own = newestOf(merges.filter((f) => f.operator === config.worker));
  const ownGroups = own !== undefined && mine(own) ? (own.header.merge as MergeState).groups : undefined;
  if (own !== undefined && mine(own) && ownGroups === undefined) return { epoch: restore, kind: "same" };
  // A worker's checkpoints under this id: the store's own step refuses them, naming why.
  if (scan.found.some((f) => f.operator === config.worker && f.header.merge === undefined))
    return { epoch: restore, kind: "same" };
  let from = own !== undefined && mine(own) ? [own] : mergeSources(merges, config);
  let label = from?.[0] === own && own !== undefined ? "its own checkpoint" : "the merge stage's newest checkpoints";
  if (from === undefined && began !== undefined) {
    const sp = await savepointCheckpoints(began);
    const files = sp.found.filter((f) => f.header.merge !== undefined);
    from = mergeSources(files, config);
    label = sp.label;
    if (from === undefined && files.length > 0) throw cannotSplit(files, config);
  }
  if (from === undefined) {
    if (merges.length === 0) return { epoch: restore, kind: "fresh" };
    throw cannotSplit(merges, config);
  }
  const taken = await Promise.all(from.map(async (f) => ({ f, cp: decodeCheckpoint(await readFile(f.file), f.file) })));
  const restored = restoreMerge(config, factory, taken);
  const cut = `${label}: ${from.map((f) => `merge partition ${mergeLayoutOf(f).m} of ${mergeLayoutOf(f).of}`).join(", ")}`;
  log.info({ files: from.map((f) => f.file), cut, epoch }, `restored from ${cut}`);
  const files = taken.map(({ f, cp }) => ({ file: f.file, partitions: [...cp.header.partitions] }));
  const restoredCut = { cut, files, fresh: [], resumeAfter: {} };
  const loaded = { checkpoint: undefined, file: from[0]?.file, skipped: scan.unreadable, cut: restoredCut };
  return { epoch: restore, kind: "cut", loaded, restored };
}

/**
 * The merge state of the files taken: one plain file as it is; else a core of every file's groups
 * (merge-groups.ts) and their states gathered (the first place each tick's aggregates are found).
 */
function restoreMerge(
  config: MergeConfig,
  factory: CoreFactory,
  taken: ReadonlyArray<{ f: FoundCheckpoint; cp: Checkpoint }>,
): Restored<MergeState> {
  const states = taken.map(({ f, cp }) => mergeStateFrame.read(cp.header, f.file));
  const logTime = Math.max(...taken.map(({ cp }) => cp.header.logTime ?? -Infinity));
  const first = taken[0] as { f: FoundCheckpoint; cp: Checkpoint };
  if (taken.length === 1 && states[0]?.groups === undefined)
    return {
      state: states[0] as MergeState,
      core: factory.restore(config.core, first.cp.snapshot),
      logTime: first.cp.header.logTime,
    };
  const members = taken.flatMap(({ f, cp }, i) => {
    const groups = states[i]?.groups ?? [{ partition: mergeLayoutOf(f).m, of: mergeLayoutOf(f).of }];
    const snaps = states[i]?.groups === undefined ? [cp.snapshot] : decodeGroupContainer(cp.snapshot);
    return groups.map((g, k) => ({ ...g, core: factory.restore(config.core, snaps[k] as Uint8Array) }));
  });
  return {
    state: gatherMergeStates(states),
    core: new MergeGroups(members),
    logTime: Number.isFinite(logTime) ? logTime : null,
  };
}

function cannotSplit(files: readonly FoundCheckpoint[], config: MergeConfig): RuntimeError {
  const counts = [...new Set(files.map((f) => mergeLayoutOf(f).of))].join(", ");
  const M = config.mergePartitions;
  return new RuntimeError(
    "TM_CHECKPOINT_UNCOVERED",
    `the merge stage's state was written with mergePartitions ${counts}, and merge partition ${config.mergePartition} of ${M} ` +
      `has nothing to restore from: the count may change to a multiple of the old one, or to a divisor of it when the old ` +
      `operators' checkpoints of one aligned checkpoint are there (take a savepoint first: tidemark savepoint --to DIR, then ` +
      `--from-savepoint DIR). Start with mergePartitions ${counts}, or use a fresh --data directory for the merge stage`,
  );
}
