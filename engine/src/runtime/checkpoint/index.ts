/**
 * runtime/checkpoint — checkpoints and their alignment (docs/operations.md, "Checkpoints";
 * docs/decisions/0016-checkpoints-without-pause.md, docs/decisions/0031-aligned-checkpoints.md).
 *
 * Owns: restoring at any parallelism (docs/decisions/0057-elastic-workers.md: the cut over every
 * operator's headers, restore-set.ts, worker-cut.ts, merge-cut.ts; a worker's state put together
 * by partition, restore-groups.ts; restore epochs and savepoints), the file format (checkpoint-codec.ts) with each operator's checkpointed state as one type
 * (WorkerState, MergeState) and how it sits in the header (state-frames.ts: written at a cut, read
 * back unchanged at a restore), the header and write every operator shares (checkpoint-frame.ts),
 * the store, the restore step (restore-plan.ts: which checkpoint, the core from its snapshot, the
 * operator's state), snapshots encoded across event-loop turns, when checkpoints are due
 * (checkpoint-spacing.ts; the CheckpointTrigger policies WorkerTrigger and MergeTrigger, asked by
 * the OperatorHost, which runs the cut), the aligned-checkpoint protocol: the coordinator,
 * barrier alignment, start notices, acks and waits; and node:zlib's CRC-32 handed to the core for
 * its snapshots' seals (native-crc32.ts).
 *
 * May import: core/, protocol, nats wiring through its callers, config/, input/ and output/ (for
 * the types a header carries), the runtime root. Never host/, worker/ or merge/.
 *
 * Invariants: state and input offsets advance together or not at all; a checkpoint is durable only
 * once everything published before its cut is acknowledged; a file is written atomically and
 * checked by SHA-256 on load; a newer reader reads every older version.
 */
export {
  CHECKPOINT_VERSION,
  decodeCheckpoint,
  encodeCheckpoint,
  type Checkpoint,
  type CheckpointHeader,
} from "./checkpoint-codec.js";
export type { WorkerState } from "./worker-state.js";
export type { MergeState } from "./merge-state.js";
export type { CheckpointEvent } from "./checkpoint-event.js";
export { checkpointHeader, persistCheckpoint, type CheckpointOwner } from "./checkpoint-frame.js";
export { CheckpointStore, type LoadedCheckpoint, type WrittenCheckpoint } from "./checkpoint-store.js";
export { planRestore, type CoreFactory, type CutPlanner, type RestorePlan, type RoleCut } from "./restore-plan.js";
export {
  chooseRestoreSet,
  type Assigned,
  type FoundCheckpoint,
  type RestoreSet,
  type RestoreWant,
} from "./restore-set.js";
export { scanCheckpoints, readHeader, type Scan } from "./checkpoint-scan.js";
export { planWorkerCut } from "./worker-cut.js";
export { planMergeCut } from "./merge-cut.js";
export { mergeLayoutOf, mergeSources } from "./merge-sources.js";
export { restoreEpoch, type RestoreEpoch } from "./restore-epoch.js";
export {
  readSavepoint,
  writeSavepoint,
  cutPositions,
  SAVEPOINT_FORMAT,
  type Savepoint,
  type SavepointManifest,
} from "./savepoint.js";
export { takeSavepoint, offlineSavepoint, type OnlineSavepoint } from "./take-savepoint.js";
export { mergeStateFrame, workerStateFrame, type Restored, type StateFrame } from "./state-frames.js";
export type { CheckpointTrigger, CutPlan } from "./checkpoint-trigger.js";
export { WorkerTrigger, type BarrierAck } from "./worker-trigger.js";
export { MergeTrigger } from "./merge-trigger.js";
export { COORDINATED_MS, checkpointSpacing } from "./checkpoint-spacing.js";
export { encodeAcrossTurns } from "./snapshot-turns.js";
export { encodeCut, type Cut, type Taken } from "./encode-cut.js";
export { BarrierAlignment, type Aligned } from "./barrier-alignment.js";
export { CheckpointCoordinator } from "./checkpoint-coordinator.js";
export { useNativeCrc32 } from "./native-crc32.js";
