/**
 * `@tidemark/engine/runtime`: the engine role, adapters around the core (JetStream source, sinks,
 * checkpoints, backfill). NATS wiring shared with the other roles is `@tidemark/engine/nats`.
 */
export { startEngine, type RunningEngine, type StartEngineOptions, type CoreFactory } from "./worker/start-engine.js";
export { parseEngineConfig, ENGINE_FLAGS, type EngineConfig, type EngineConfigSources } from "./config/config.js";
export { parsePartitionList, formatPartitionList } from "./input/partition-list.js";
export { PartitionInterleave, type InterleaveSink, type LaneOffset } from "./input/partition-interleave.js";
export { CheckpointStore, type LoadedCheckpoint, type WrittenCheckpoint } from "./checkpoint/checkpoint-store.js";
export {
  encodeCheckpoint,
  decodeCheckpoint,
  CHECKPOINT_VERSION,
  type Checkpoint,
  type CheckpointHeader,
} from "./checkpoint/checkpoint-codec.js";
export { BackfillPlan, type BackfillMessage, type BackfillPlanOptions } from "./backfill/backfill-plan.js";
export { parseRecordingLine } from "./backfill/recording-line.js";
export { EngineWorker } from "./worker/engine-worker.js";
export type { CheckpointEvent } from "./checkpoint/checkpoint-event.js";
export { OperatorHost, type HostOptions } from "./host/operator-host.js";
export type { Operator, HostContext, OperatorOutput, CheckpointWaiting } from "./host/operator.js";
export { PaneSink } from "./output/pane-sink.js";
export { RuntimeError, type RuntimeErrorCode } from "./errors.js";
export { startMerge, type RunningMerge } from "./merge/start-merge.js";
export { parseMergeConfig, MERGE_FLAGS, type MergeConfig } from "./config/merge-config.js";
export { MergeOperator, type BatchOutcome } from "./merge/merge-operator.js";
export { takeSavepoint, offlineSavepoint, type OnlineSavepoint } from "./checkpoint/take-savepoint.js";
export { readSavepoint, SAVEPOINT_FORMAT, type Savepoint, type SavepointManifest } from "./checkpoint/savepoint.js";
export { scanCheckpoints, readHeader as readCheckpointHeader } from "./checkpoint/checkpoint-scan.js";
export { chooseRestoreSet, type FoundCheckpoint, type RestoreSet, type RestoreWant } from "./checkpoint/restore-set.js";
export { restoreEpoch, type RestoreEpoch } from "./checkpoint/restore-epoch.js";
