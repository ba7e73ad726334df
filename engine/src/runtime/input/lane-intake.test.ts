import { describe, expect, it } from "vitest";
import { LaneIntake, MAX_QUEUED_MESSAGES } from "./lane-intake.js";

describe("LaneIntake", () => {
  it("holds a lane's consumer at its bound in messages or events, and lets it read on under half of both", async () => {
    const queued = [0, 0];
    const events = [0, 0];
    const intake = new LaneIntake({ queued: (l) => queued[l] ?? 0, queuedEvents: (l) => events[l] ?? 0 }, 2, 1000);
    expect(intake.backpressure(0)).toBeUndefined();
    events[0] = 1000;
    queued[0] = 3;
    let read = false;
    const held = intake.backpressure(0)?.then(() => (read = true));
    queued[1] = MAX_QUEUED_MESSAGES;
    const other = intake.backpressure(1);
    expect([held, other].every((p) => p !== undefined)).toBe(true);
    events[0] = 600;
    intake.release();
    await Promise.resolve();
    expect(read).toBe(false); // over half of the events
    events[0] = 499;
    intake.release();
    await held;
    expect(read).toBe(true);
    intake.releaseAll(); // lane 1 is let go however full
    await other;
  });
});
