/** The pure event-time core: no I/O, no clock, no env (docs/architecture.md, "Packages and boundaries"). */
export { parseDuration, formatDuration, DurationError } from "./duration.js";
export { coreAggregates, createCore, partialSliceLengths, restoreCore } from "./create-core.js";
export { PartialAccumulator, type PartialAccumulatorState } from "./partials/partial-accumulator.js";
export { TickAligner, type OfferOutcome, type TickAlignerState } from "./partials/tick-aligner.js";
export { defaultCoreConfig, DEFAULT_POLICIES } from "./default-config.js";
export { MAX_LATENCY_THRESHOLDS, validateCoreConfig } from "./validate-config.js";
export { CoreError, ConfigError, type CoreErrorCode } from "./errors.js";
export { keyIdOf } from "./windows/window-state.js";
export { OTHER_ROUTE, OTHER_SERVICE } from "./windows/key-registry.js";
export { SNAPSHOT_VERSION } from "./snapshot/snapshot.js";
export { allSteps, snapshotStepsOf } from "./snapshot/snapshot-steps.js";
export { SNAPSHOT_CAPTURED } from "./types.js";
export { studentT975 } from "./dial/student-t.js";
export type {
  AccumulationMode,
  CoreConfig,
  CoreOutput,
  CoreStatus,
  PartialTick,
  PartitionStatus,
  PolicyConfig,
  PolicyStatus,
  SnapshotSteps,
  StreamCore,
  WatermarkStrategyConfig,
  WindowConfig,
} from "./types.js";
export {
  simulate,
  withCorrelatedFailures,
  serviceName,
  DEFAULT_SIMULATION,
  SIMULATION_START_MS,
  type SimulationOptions,
  type CorrelatedFailures,
} from "./simulation.js";
export { Prng } from "./prng.js";
export {
  runFrontier,
  lagGracePolicy,
  maxDelay,
  policyLag,
  type FrontierResult,
  type FrontierPolicyResult,
  type FrontierOptions,
} from "./frontier.js";
export {
  createSessionOperator,
  restoreSessionOperator,
  withSessions,
  validateSessionConfig,
  DEFAULT_SESSION_CONFIG,
  SESSION_SNAPSHOT_VERSION,
  type SessionCore,
  type SessionConfig,
  type SessionStatus,
  type CoreWithSessions,
  type CoreWithSessionsStatus,
} from "./session/index.js";
export * from "./grouped/index.js";
