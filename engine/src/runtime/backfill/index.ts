/**
 * runtime/backfill — replaying a recording into TM_EVENTS (docs/operations.md, "Backfill").
 *
 * Owns: reading recording lines and planning the messages (batches and heartbeats per partition)
 * that make the live engine compute what the offline core does on the same recording.
 *
 * May import: core/ (types), protocol, the runtime root (errors). Nothing else of the runtime.
 *
 * Invariants: pure planning: the same recording gives the same messages, partitioned as ingest
 * partitions, with ingest_ts as recorded.
 */
export { BackfillPlan, type BackfillMessage, type BackfillPlanOptions } from "./backfill-plan.js";
export { parseRecordingLine } from "./recording-line.js";
