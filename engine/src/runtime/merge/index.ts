/**
 * runtime/merge — the merge operator role, stage 2 of the two-stage dataflow
 * (docs/operations.md, "Merge stage"; docs/decisions/0029-two-stage-dataflow.md,
 * docs/decisions/0031-aligned-checkpoints.md, docs/decisions/0033-merge-partitions.md). Its pure
 * half is core/partials/.
 *
 * Owns: MergeOperator, the operator that reads its merge partition of TM_PARTIALS, aligns ticks
 * (core/partials/tick-aligner.ts), aligns checkpoint barriers and feeds the merged ticks to the
 * core (run by an OperatorHost); MergeRelease, its output side; the follower of the checkpoint
 * coordinator (merge partitions ≥ 1); its tm.status publisher; `startMerge`, the role's steps.
 *
 * May import: host/, input/, output/, checkpoint/, status/, config/, core/, nats/, protocol.
 * Never worker/.
 *
 * Invariants: a tick goes through the core once, when every partition has reported past it or is
 * left out as silent; what one TM_PARTIALS message releases goes out as one EmitGroup whose ids
 * never meet a TM_EVENTS partition's; a checkpoint is cut between two messages.
 */
export { MergeOperator, type BatchOutcome } from "./merge-operator.js";
export { MergeRelease } from "./merge-release.js";
export { CheckpointFollower } from "./checkpoint-follower.js";
export { MergeStatusPublisher, type CheckpointProgress } from "./merge-status.js";
export { startMerge, type RunningMerge } from "./start-merge.js";
