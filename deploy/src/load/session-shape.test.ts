import { describe, expect, it } from "vitest";
import { QUIET_MIN_MS, activeShare, sessionShape } from "./session-shape.js";

/** Requests per second the whole population makes: users × L̄ / ((L̄ − 1)·T + Q). */
function rateOf(users: number, s: ReturnType<typeof sessionShape>): number {
  return (users * 1000 * s.requestsMean) / ((s.requestsMean - 1) * s.thinkMeanMs + s.quietMeanMs);
}

describe("sessionShape", () => {
  it.each([
    [1000, 20_000],
    [10_000, 20_000],
    [30_000, 20_000],
    [2000, 300],
    [1000, 1_000_000],
    [5, 10],
  ])("sizes sessions so %d events/s come from %d users, quiet for over a minute between sessions", (rate, users) => {
    const s = sessionShape(rate, users);
    expect(rateOf(users, s)).toBeCloseTo(rate, 6);
    expect(s.quietMeanMs).toBeGreaterThan(QUIET_MIN_MS);
    expect(s.requestsMean).toBeGreaterThanOrEqual(3);
    expect(s.thinkMeanMs).toBeLessThanOrEqual(20_000);
  });

  it("keeps most users in a session when the rate allows it (the default: 18 s think, 36 requests)", () => {
    const s = sessionShape(1000, 20_000);
    expect(s.thinkMeanMs).toBe(18_000);
    expect(s.requestsMean).toBeCloseTo(36, 9);
    expect(activeShare(s)).toBeGreaterThan(0.85);
    expect(activeShare(sessionShape(1000, 1_000_000))).toBeLessThan(0.05);
  });

  it("refuses a rate or a population that is not positive", () => {
    expect(() => sessionShape(0, 10)).toThrow(RangeError);
    expect(() => sessionShape(10, 0)).toThrow(RangeError);
  });
});
