/**
 * How far apart checkpoints are (docs/operations.md, "Checkpoints"): beside `checkpointEvery`,
 * a checkpoint holds each operator's input from its cut until its snapshot is captured, so the
 * next one starts no sooner than HOLD_DUTY times the longest such hold of the last after it ended
 * — holding stays within 1 % of the time whatever the state's size
 * (docs/decisions/0034-sessions-at-scale.md) — and a worker's own checkpoints are also spaced by
 * SNAPSHOT_DUTY times the last snapshot's encoding work (docs/decisions/0016-checkpoints-without-pause.md).
 */
export const HOLD_DUTY = 100;
export const SNAPSHOT_DUTY = 20;
