import { describe, expect, it } from "vitest";
import { Silence, silentSince } from "./silence.js";

describe("Silence", () => {
  it("is silent from exactly the timeout on, per source, and restarts every source at once", () => {
    const s = new Silence(3, 1_000);
    s.heard(1, 4_000);
    expect(s.silent(0, 5_999, 5_000)).toBe(false);
    expect(s.silent(0, 6_000, 5_000)).toBe(true);
    expect(s.silent(1, 6_000, 5_000)).toBe(false);
    expect(s.silent(1, 9_000, 5_000)).toBe(true);
    s.restart(10_000);
    expect([0, 1, 2].map((i) => s.silent(i, 14_999, 5_000))).toEqual([false, false, false]);
    expect([0, 1, 2].map((i) => s.silent(i, 15_000, 5_000))).toEqual([true, true, true]);
  });

  it("ignores sources out of range: never heard of, never silent", () => {
    const s = new Silence(2, 0);
    s.heard(5, 100);
    expect(s.silent(5, 1e9, 1)).toBe(false);
  });

  it("silentSince is the same rule on one time", () => {
    expect(silentSince(-Infinity, 0, 1e9)).toBe(true);
    expect(silentSince(100, 199, 100)).toBe(false);
    expect(silentSince(100, 200, 100)).toBe(true);
  });
});
