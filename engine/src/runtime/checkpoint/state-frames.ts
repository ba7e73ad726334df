/**
 * Each operator kind's checkpointed state in the checkpoint header (docs/decisions/0045-operator-host.md,
 * decision 6): one explicit type per operator (WorkerState, MergeState), written at a cut from what
 * its `handleCheckpoint` returned and read back at a restore into the very same value, which the
 * host hands to its `restore` handler, with the core made from the cut's snapshot, before the input
 * starts. What the header holds around it
 * (identity, log time, wall clock, barrier, final) is checkpoint-frame.ts's.
 */
import type { StreamCore } from "../../core/types.js";
import { RuntimeError } from "../errors.js";
import type { CheckpointHeader } from "./checkpoint-codec.js";
import type { OperatorHeaderState } from "./checkpoint-frame.js";
import type { MergeState } from "./merge-state.js";
import type { WorkerState } from "./worker-state.js";

/** How one operator kind's state S sits in a header: `read(header of write(s))` is s. */
export interface StateFrame<S> {
  write(state: S): OperatorHeaderState;
  /** The state a header carries; throws TM_CHECKPOINT_MISMATCH when another operator kind wrote it. */
  read(header: CheckpointHeader, file: string | undefined): S;
}

/**
 * What an operator is restored from — what its `handleCheckpoint` produced at a cut: its state, and
 * its core made from the snapshot (the restore step decodes it, CoreFactory.restore); with that
 * cut's log time.
 */
export interface Restored<S> {
  state: S;
  core: StreamCore;
  logTime: number | null;
}

/** A WorkerState is its header fields: written as they are, read back with the absent ones left out. */
export const workerStateFrame: StateFrame<WorkerState> = {
  write: (state) => state,
  read: ({ offsets, pending, partials, groups }) => ({
    offsets,
    ...(pending !== undefined ? { pending } : {}),
    ...(partials !== undefined ? { partials } : {}),
    ...(groups !== undefined ? { groups } : {}),
  }),
};

/** A MergeState is the header's `merge` (a merge operator owns no TM_EVENTS offsets); a header without one is a worker's. */
export const mergeStateFrame: StateFrame<MergeState> = {
  write: (merge) => ({ offsets: [], merge }),
  read: (header, file) => {
    if (header.merge !== undefined) return header.merge;
    throw new RuntimeError(
      "TM_CHECKPOINT_MISMATCH",
      `checkpoint ${file} was written by an engine worker, not a merge operator: ` +
        `give the merge operator its own id (--worker) or --data directory`,
    );
  },
};
