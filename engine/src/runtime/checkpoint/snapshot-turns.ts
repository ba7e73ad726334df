/**
 * Encodes a snapshot taken in steps across event-loop turns (docs/decisions/0016-checkpoints-without-pause.md):
 * each turn runs steps for about `sliceMs`, then gives the loop back (setImmediate) so acknowledgements,
 * heartbeats, status and /metrics are served between slices. The caller holds the core's input until
 * the promise settles, or until `onCaptured` runs (a step yielded SNAPSHOT_CAPTURED: the rest is
 * encoded from copies, docs/decisions/0034-sessions-at-scale.md; it is given the slices' work up to
 * there): the bytes are the state at the cut.
 */
import { SNAPSHOT_CAPTURED, type SnapshotSteps } from "../../core/types.js";

/** Work per turn: the event loop is never blocked much longer than this by a snapshot. */
export const SNAPSHOT_SLICE_MS = 4;

export interface SteppedSnapshot {
  bytes: Uint8Array;
  /** Event-loop turns the encoding took. */
  turns: number;
  /** The longest synchronous slice, ms (one step past `sliceMs` at most). */
  longestSliceMs: number;
  /** The slices summed, ms: the encoding's work, without the turns between them. */
  workMs: number;
}

export function encodeAcrossTurns(
  steps: SnapshotSteps,
  sliceMs = SNAPSHOT_SLICE_MS,
  onCaptured: (workMs: number) => void = () => undefined,
): Promise<SteppedSnapshot> {
  return new Promise((resolve, reject) => {
    let turns = 0;
    let longestSliceMs = 0;
    let workMs = 0;
    const turn = (): void => {
      const t0 = performance.now();
      turns++;
      try {
        for (;;) {
          const r = steps.next();
          if (r.value === SNAPSHOT_CAPTURED) onCaptured(workMs + performance.now() - t0);
          const took = performance.now() - t0;
          if (r.done) {
            resolve({ bytes: r.value, turns, longestSliceMs: Math.max(longestSliceMs, took), workMs: workMs + took });
            return;
          }
          if (took >= sliceMs) {
            longestSliceMs = Math.max(longestSliceMs, took);
            workMs += took;
            break;
          }
        }
      } catch (err) {
        reject(err as Error);
        return;
      }
      setImmediate(turn);
    };
    turn();
  });
}
