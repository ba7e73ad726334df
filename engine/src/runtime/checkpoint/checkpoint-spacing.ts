/**
 * How far apart checkpoints are (docs/operations.md, "Checkpoints"): beside `checkpointEvery`,
 * a checkpoint holds each operator's input from its cut until its snapshot is captured. The hold is
 * measured as the work of the snapshot's slices within it (the turns between slices, where the loop
 * serves other work or the machine runs other processes, not counted: the state's own cost, as in
 * docs/decisions/0016-checkpoints-without-pause.md). Once the longest such hold of the last one passes
 * HOLD_FLOOR_MS, the next starts no sooner than HOLD_DUTY times it after the last ended — holding
 * stays within about 1 % of the time however large the state grows
 * (docs/decisions/0034-sessions-at-scale.md, decision 13); a hold under the floor costs little at the
 * default `checkpointEvery` (5 s) and leaves a short one as set. A worker's own checkpoints are also
 * spaced by SNAPSHOT_DUTY times the last snapshot's encoding work.
 */
export const HOLD_DUTY = 100;
export const HOLD_FLOOR_MS = 50;
export const SNAPSHOT_DUTY = 20;
/**
 * While the coordinator asked for a checkpoint (or aligned one) this recently, an operator takes
 * none of its own: the coordinator paces them (docs/decisions/0031-aligned-checkpoints.md).
 */
export const COORDINATED_MS = 30_000;

/** The least wall time from the end of a checkpoint to the start of the next. */
export function checkpointSpacing(everyMs: number, lastHoldMs: number): number {
  return lastHoldMs > HOLD_FLOOR_MS ? Math.max(everyMs, HOLD_DUTY * lastHoldMs) : everyMs;
}
