/**
 * The parts of a checkpoint every operator writes alike (docs/operations.md, "Checkpoints"): the
 * header around the operator's own state (its id, partitions, log time, wall clock, the aligned
 * checkpoint n it is, whether a stop wrote it), and the write that makes it durable and reports it.
 */
import type { Checkpoint, CheckpointHeader } from "./checkpoint-codec.js";
import type { CheckpointEvent } from "./checkpoint-event.js";
import type { CheckpointStore } from "./checkpoint-store.js";

/** Who writes the checkpoint: the operator's id and its partitions of TM_EVENTS. */
export interface CheckpointOwner {
  /** The operator's id (its header field is `worker`, a file format field: docs/decisions/0045-operator-host.md). */
  operatorId: string;
  partitionCount: number;
  partitions: readonly number[];
  /** The restore epoch (docs/decisions/0057-elastic-workers.md; absent or 0: the first). */
  epoch?: number;
}

/** The operator's own part of a header: a worker's offsets and open groups, a merge operator's `merge`. */
export type OperatorHeaderState = Pick<CheckpointHeader, "offsets" | "pending" | "partials" | "merge" | "groups">;

/** A header cut now: identity, log time, wall clock, the operator's state, then `barrier` and `final`. */
export function checkpointHeader(
  owner: CheckpointOwner,
  logTime: number | null,
  wallTime: number,
  { offsets, ...state }: OperatorHeaderState,
  barrier: number | undefined,
  final: boolean,
): CheckpointHeader {
  return {
    worker: owner.operatorId,
    partitionCount: owner.partitionCount,
    partitions: [...owner.partitions],
    offsets,
    logTime,
    wallTime,
    ...state,
    ...(barrier !== undefined ? { barrier } : {}),
    ...(final ? { final: true as const } : {}),
    ...((owner.epoch ?? 0) > 0 ? { epoch: owner.epoch } : {}),
  };
}

/** How the snapshot of a checkpoint was taken (the timings its CheckpointEvent reports). */
export interface SnapshotTiming {
  /** performance.now() at the cut. */
  t0: number;
  pauseMs: number;
  holdWorkMs: number;
  longestSliceMs: number;
  workMs: number;
}

/** Writes a checkpoint durably and reports it; resolves with the file. */
export async function persistCheckpoint(
  store: CheckpointStore,
  cp: Checkpoint,
  timing: SnapshotTiming,
  report: (e: CheckpointEvent) => void,
): Promise<string> {
  const w = await store.write(cp);
  report({
    file: w.file,
    bytes: w.bytes,
    pauseMs: timing.pauseMs,
    holdWorkMs: timing.holdWorkMs,
    longestSliceMs: timing.longestSliceMs,
    workMs: timing.workMs,
    totalMs: performance.now() - timing.t0,
    logTime: cp.header.logTime,
  });
  return w.file;
}
