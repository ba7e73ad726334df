import { describe, expect, it } from "vitest";
import { StallWatch, STALL_MS } from "./stall-watch.js";

describe("StallWatch", () => {
  it("reports a waited-for lane once its time has stood still for STALL_MS, and once per stall", () => {
    const w = new StallWatch(2, 0);
    expect(w.observe(1, [1000, null], 1000)).toBe(null);
    expect(w.observe(1, [2000, null], STALL_MS - 1)).toBe(null);
    expect(w.observe(1, [3000, null], STALL_MS)).toBe(1);
    expect(w.observe(1, [4000, null], STALL_MS + 1000)).toBe(null);
    // It speaks, then falls silent again: a new stall, reported again.
    expect(w.observe(1, [4000, 4000], STALL_MS + 2000)).toBe(null);
    expect(w.observe(1, [9000, 4000], 2 * STALL_MS + 2000)).toBe(1);
  });

  it("does not report a lane that moves, nor one the merge is not waiting for", () => {
    const w = new StallWatch(2, 0);
    for (let t = 0; t <= 3 * STALL_MS; t += 1000) {
      expect(w.observe(0, [t, t], t)).toBe(null);
      expect(w.observe(null, [t, 0], t)).toBe(null);
    }
  });

  it("restarts its clocks on a reconnect", () => {
    const w = new StallWatch(1, 0);
    w.restart(STALL_MS);
    expect(w.observe(0, [null], STALL_MS + 1)).toBe(null);
    expect(w.observe(0, [null], 2 * STALL_MS)).toBe(0);
  });
});
