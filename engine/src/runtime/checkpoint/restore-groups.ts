/**
 * A worker's state restored from a cut other workers wrote (docs/decisions/0057-elastic-workers.md):
 * every group of every chosen file that holds one of its partitions becomes a group of its core
 * (core/grouped), partitions with no checkpoint get a fresh core of their own, and its WorkerState
 * is put together partition by partition — each resumes at its own offset, the open groups of its
 * input messages come with it, and the old workers' open ticks are gathered
 * (core/partials/accumulator-restore.ts). One group holding exactly the worker's partitions in its
 * lane order restores as a plain core.
 */
import { GroupedCore, decodeGroupContainer, type CoreGroup, type GroupCore } from "../../core/grouped/index.js";
import { restoreAccumulators, type AccumulatorPart } from "../../core/partials/accumulator-restore.js";
import type { AggregateKind } from "../../core/windows/aggregate.js";
import type { StreamCore } from "../../core/types.js";
import type { EngineConfig } from "../config/config.js";
import type { LaneOffset } from "../input/partition-interleave.js";
import type { Checkpoint } from "./checkpoint-codec.js";
import type { CoreFactory } from "./core-factory.js";
import type { Restored } from "./state-frames.js";
import type { WorkerState } from "./worker-state.js";

/** A verified file of the cut and the partitions this worker restores from it. */
export interface Taken {
  cp: Checkpoint;
  file: string;
  partitions: readonly number[];
}

const NO_OFFSET: LaneOffset = { lastSeq: 0, partialSeq: 0, partialCount: 0, logTime: null };

/** The groups a checkpoint holds (a plain one: one group of its partitions) and their snapshots. */
export function groupsOf(cp: Checkpoint): Array<{ group: CoreGroup; snapshot: Uint8Array }> {
  const h = cp.header;
  if (h.groups === undefined)
    return [
      {
        group: { partitions: [...h.partitions], lanes: h.partitions.map((_, i) => i), coreLanes: h.partitions.length },
        snapshot: cp.snapshot,
      },
    ];
  const parts = decodeGroupContainer(cp.snapshot);
  return h.groups.map((group, i) => ({ group, snapshot: parts[i] as Uint8Array }));
}

export function restoreFromCut(
  config: EngineConfig,
  cores: CoreFactory,
  kind: AggregateKind,
  /** The cut's files, each with the partitions restored from it. */
  chosen: readonly Taken[],
  fresh: readonly number[],
  /** Checks a group's snapshot before it is restored (its session setting), naming its file. */
  check: (snapshot: Uint8Array, file: string) => void,
): Restored<WorkerState> {
  const owned = config.partitions;
  const members = chosen.flatMap((t) => membersOf(config, cores, t, check));
  if (fresh.length > 0)
    members.push({
      partitions: [...fresh],
      lanes: fresh.map((_, i) => i),
      coreLanes: fresh.length,
      core: cores.create({ ...config.core, partitions: fresh.length }),
    });
  const state = stateOf(owned, chosen, kind);
  const logTimes = chosen.map(({ cp }) => cp.header.logTime).filter((t): t is number => t !== null);
  return {
    state,
    core: coreOf(config, members),
    logTime: logTimes.length === 0 ? null : Math.max(...logTimes),
  };
}

/**
 * The core of a worker's own grouped checkpoint (its header's `groups`), the same layout restarting:
 * its groups restored as they were written.
 */
export function groupedCoreOf(
  config: EngineConfig,
  cores: CoreFactory,
  cp: Checkpoint,
  file: string,
  check: (snapshot: Uint8Array, file: string) => void,
): StreamCore {
  return coreOf(config, membersOf(config, cores, { cp, file, partitions: cp.header.partitions }, check));
}

/** The groups of a file that hold partitions restored from it, each core restored. */
function membersOf(
  config: EngineConfig,
  cores: CoreFactory,
  { cp, file, partitions }: Taken,
  check: (snapshot: Uint8Array, file: string) => void,
): GroupCore[] {
  const members: GroupCore[] = [];
  for (const { group, snapshot } of groupsOf(cp)) {
    const mine = group.partitions.filter((p) => partitions.includes(p));
    if (mine.length === 0) continue;
    check(snapshot, file);
    const core = cores.restore({ ...config.core, partitions: group.coreLanes }, snapshot);
    const lanes = mine.map((p) => group.lanes[group.partitions.indexOf(p)] as number);
    members.push({ partitions: mine, lanes, coreLanes: group.coreLanes, core });
  }
  return members;
}

function coreOf(config: EngineConfig, members: readonly GroupCore[]): StreamCore {
  const only = members.length === 1 ? (members[0] as GroupCore) : null;
  const plain =
    only !== null &&
    only.coreLanes === config.partitions.length &&
    only.partitions.every((p, i) => p === config.partitions[i] && only.lanes[i] === i);
  if (plain) return only.core;
  return new GroupedCore(config.partitions, members, {
    partitionCount: config.partitionCount,
    partitionBy: config.partitionBy,
  });
}

/**
 * Offsets, open groups and the open tick, partition by partition (core/partials/accumulator-restore.ts).
 */
function stateOf(owned: readonly number[], chosen: readonly Taken[], kind: AggregateKind): WorkerState {
  // Each lane keyed at least at its old worker's log time (input/partition-interleave.ts, `floor`).
  const offsets = owned.map((p): LaneOffset => {
    const t = chosen.find((c) => c.partitions.includes(p));
    if (t === undefined) return { ...NO_OFFSET };
    const o = t.cp.header.offsets[t.cp.header.partitions.indexOf(p)] as LaneOffset;
    return { ...o, floor: t.cp.header.logTime };
  });
  const pending = chosen.flatMap(({ cp, partitions }) =>
    (cp.header.pending ?? []).filter((g) => partitions.includes(g.partition)),
  );
  const parts: AccumulatorPart[] = chosen.flatMap(({ cp, partitions }) =>
    cp.header.partials === undefined
      ? []
      : [{ state: cp.header.partials, partitions: cp.header.partitions, mine: partitions }],
  );
  return {
    offsets,
    ...(pending.length > 0 ? { pending } : {}),
    ...(parts.length > 0 ? { partials: restoreAccumulators(owned, parts, kind) } : {}),
  };
}
