import { describe, expect, it } from "vitest";
import { sliceStartOf, windowSpec, windowStartsOf } from "./window-assigner.js";

describe("WindowAssigner", () => {
  it("tumbling: one window per event, epoch aligned, a pure function of ts", () => {
    const s = windowSpec({ kind: "tumbling", sizeMs: 60_000 });
    expect(sliceStartOf(s, 119_999)).toBe(60_000);
    expect(sliceStartOf(s, 120_000)).toBe(120_000);
    expect(windowStartsOf(s, 60_000)).toEqual([60_000]);
    expect(sliceStartOf(s, -1)).toBe(-60_000);
  });
  it("sliding: slices of gcd(size, slide), each in size/slide windows", () => {
    const s = windowSpec({ kind: "sliding", sizeMs: 30_000, slideMs: 20_000 });
    expect(s.sliceMs).toBe(10_000);
    // slice [40s, 50s) lies in windows starting at 20s ([20,50)) and 40s ([40,70)).
    expect(windowStartsOf(s, 40_000)).toEqual([20_000, 40_000]);
    // slice [50s, 60s) lies only in [40s, 70s).
    expect(windowStartsOf(s, 50_000)).toEqual([40_000]);
    const t = windowSpec({ kind: "sliding", sizeMs: 60_000, slideMs: 10_000 });
    expect(windowStartsOf(t, 100_000)).toEqual([50_000, 60_000, 70_000, 80_000, 90_000, 100_000]);
  });
});
