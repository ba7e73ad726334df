/** The least time between two checkpoints (docs/decisions/0034-sessions-at-scale.md, decision 11). */
import { describe, expect, it } from "vitest";
import { checkpointSpacing, HOLD_DUTY, HOLD_FLOOR_MS } from "./checkpoint-spacing.js";

describe("checkpoint spacing", () => {
  it("is checkpointEvery while holds stay under the floor, then 100x the hold: holding stays within 1 % of the time", () => {
    expect(checkpointSpacing(5_000, 0)).toBe(5_000);
    expect(checkpointSpacing(500, HOLD_FLOOR_MS)).toBe(500);
    expect(checkpointSpacing(5_000, 40)).toBe(5_000);
    expect(checkpointSpacing(5_000, 165)).toBe(16_500);
    for (const hold of [60, 120, 400])
      expect(hold / (checkpointSpacing(1_000, hold) + hold)).toBeLessThan(1 / HOLD_DUTY);
  });
});
