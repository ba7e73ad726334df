/**
 * `@tidemark/engine/runtime`: the engine role, adapters around the core (JetStream source, sinks,
 * checkpoints, backfill). NATS wiring shared with the other roles is `@tidemark/engine/nats`.
 */
export { startEngine, type RunningEngine, type StartEngineOptions, type CoreFactory } from "./start-engine.js";
export { parseEngineConfig, ENGINE_FLAGS, type EngineConfig, type EngineConfigSources } from "./config.js";
export { parsePartitionList, formatPartitionList } from "./partition-list.js";
export { PartitionMerge, type MergeSink, type LaneOffset } from "./partition-merge.js";
export { CheckpointStore, type LoadedCheckpoint, type WrittenCheckpoint } from "./checkpoint-store.js";
export {
  encodeCheckpoint,
  decodeCheckpoint,
  CHECKPOINT_VERSION,
  type Checkpoint,
  type CheckpointHeader,
} from "./checkpoint-codec.js";
export { BackfillPlan, type BackfillMessage, type BackfillPlanOptions } from "./backfill-plan.js";
export { parseRecordingLine } from "./recording-line.js";
export { EngineWorker, type CheckpointEvent } from "./engine-worker.js";
export { PaneSink } from "./pane-sink.js";
export { RuntimeError, type RuntimeErrorCode } from "./errors.js";
export { startMerge, type RunningMerge } from "./start-merge.js";
export { parseMergeConfig, MERGE_FLAGS, type MergeConfig } from "./merge-config.js";
export { MergeOperator, type BatchOutcome } from "./merge-operator.js";
