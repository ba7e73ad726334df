import { describe, expect, it } from "vitest";
import { correlate, LatenessWindow } from "./lateness.js";

describe("lateness correlation: two-proportion z test with a minimum effect", () => {
  it("late requests failing 9× more often are flagged, with z and p of the pooled-proportion test", () => {
    // 1 % of 10 000 on-time vs 9 % of 500 late (z and p computed by hand with the textbook formula).
    const c = correlate(10_000, 100, 500, 45);
    expect(c.z).toBeCloseTo(14.959276, 5);
    expect(c.p).toBeLessThan(1e-40);
    expect(c.ratio).toBeCloseTo(9, 9);
    expect(c.flagged).toBe(true);
  });

  it("a large stream with a tiny effect is significant but not flagged (difference below 1 pp)", () => {
    const c = correlate(10_000_000, 100_000, 1_000_000, 11_000);
    expect(c.z).toBeCloseTo(9.539835, 5);
    expect(c.p).toBeCloseTo(1.4306e-21, 24);
    expect(c.flagged).toBe(false);
  });

  it("late requests failing less often are flagged too (≤ −1 pp and ratio ≤ 1/1.5)", () => {
    const c = correlate(10_000, 500, 2000, 40);
    expect(c.z).toBeCloseTo(-5.907962, 5);
    expect(c.ratio).toBeCloseTo(0.4, 9);
    expect(c.flagged).toBe(true);
  });

  it("too few events: a large effect that is not significant at 1 % is not flagged", () => {
    const c = correlate(1000, 10, 30, 2);
    expect(c.p).toBeCloseTo(0.0043721, 6);
    expect(correlate(1000, 10, 20, 1).flagged).toBe(false);
    expect(c.flagged).toBe(true);
  });

  it("no on-time errors: the ratio is unknown but a late excess still counts; nothing late: untestable", () => {
    expect(correlate(10, 0, 2, 2)).toMatchObject({ ratio: null, flagged: true });
    expect(correlate(10, 0, 2, 2).z).toBeCloseTo(3.464102, 5);
    expect(correlate(10, 1, 0, 0)).toEqual({
      onTimeEvents: 10,
      onTimeErrors: 1,
      lateEvents: 0,
      lateErrors: 0,
      z: null,
      p: null,
      ratio: null,
      flagged: false,
    });
  });

  it("a window keeps the last N windows' counts only", () => {
    const l = new LatenessWindow(2);
    l.push(100, 1, 10, 0);
    l.push(200, 2, 20, 10);
    l.push(300, 3, 30, 20);
    expect(l.correlation()).toMatchObject({ onTimeEvents: 500, onTimeErrors: 5, lateEvents: 50, lateErrors: 30 });
    expect(l.rows()).toEqual([
      [200, 2, 20, 10],
      [300, 3, 30, 20],
    ]);
  });
});
