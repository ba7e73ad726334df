/** The least time between two checkpoints (docs/decisions/0034-sessions-at-scale.md, decision 11). */
import { describe, expect, it } from "vitest";
import { SNAPSHOT_CAPTURED, type SnapshotSteps } from "../../core/types.js";
import { checkpointSpacing, HOLD_DUTY, HOLD_FLOOR_MS } from "./checkpoint-spacing.js";
import { encodeAcrossTurns } from "./snapshot-turns.js";

/** Runs for `ms` of wall time on this thread. */
function burn(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("checkpoint spacing", () => {
  it("is checkpointEvery while holds stay under the floor, then 100x the hold: holding stays within 1 % of the time", () => {
    expect(checkpointSpacing(5_000, 0)).toBe(5_000);
    expect(checkpointSpacing(500, HOLD_FLOOR_MS)).toBe(500);
    expect(checkpointSpacing(5_000, 40)).toBe(5_000);
    expect(checkpointSpacing(5_000, 165)).toBe(16_500);
    for (const hold of [60, 120, 400])
      expect(hold / (checkpointSpacing(1_000, hold) + hold)).toBeLessThan(1 / HOLD_DUTY);
  });

  it("measures a hold as the slices' work up to the capture, not the turns in between", async () => {
    function* steps(): SnapshotSteps {
      for (let i = 0; i < 4; i++) {
        burn(3);
        yield;
      }
      yield SNAPSHOT_CAPTURED;
      for (let i = 0; i < 4; i++) {
        burn(3);
        yield;
      }
      return new Uint8Array(1);
    }
    let hold = -1;
    let wallAtCapture = -1;
    const t0 = performance.now();
    // Another task takes 20 ms between the slices: wall time, not the snapshot's work.
    const other = setTimeout(() => burn(20), 0);
    const s = await encodeAcrossTurns(steps(), 4, (work) => {
      hold = work;
      wallAtCapture = performance.now() - t0;
    });
    clearTimeout(other);
    expect(hold).toBeGreaterThanOrEqual(4 * 3);
    expect(hold).toBeLessThan(s.workMs);
    expect(s.workMs).toBeGreaterThanOrEqual(8 * 3);
    expect(wallAtCapture - hold).toBeGreaterThanOrEqual(20 - 1);
  });
});
