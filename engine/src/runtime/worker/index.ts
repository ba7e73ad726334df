/**
 * runtime/worker — the engine worker role, stage 1 of the two-stage dataflow
 * (docs/operations.md, "Engine workers"; docs/decisions/0029-two-stage-dataflow.md).
 *
 * Owns: EngineWorker, the operator that drives the pure core from the owned partitions of
 * TM_EVENTS (run by an OperatorHost), its stage-1 partials for the merge operators
 * (stage-one-partials.ts), its tm.status publisher, and `startEngine`, the role's steps.
 *
 * May import: host/, input/, output/, checkpoint/, status/, config/, core/, nats/, protocol.
 * Never merge/.
 *
 * Invariants: the worker judges no idleness and reads no clock for a result: the core does, in log
 * time, from what the partition interleave releases, so a replay sees what the first run saw. A
 * checkpoint is cut between two items; partials and barriers go out in order.
 */
export { EngineWorker } from "./engine-worker.js";
export { startEngine, type RunningEngine, type StartEngineOptions } from "./start-engine.js";
export { StageOnePartials } from "./stage-one-partials.js";
export { StatusPublisher } from "./worker-status.js";
