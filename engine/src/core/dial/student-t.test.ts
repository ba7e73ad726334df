import { describe, expect, it } from "vitest";
import { BiasTracker } from "./bias.js";
import { LABELS, SLOT_FINAL } from "../panes/kind-slot.js";
import { normalTwoSidedP, studentT975 } from "./student-t.js";

describe("Student t and the normal tail", () => {
  it("the 97.5 % quantile of t matches the published table (df 1 … 30, 60, 120) and tends to 1.96", () => {
    // Fisher & Yates' table, 0.975 one-sided (e.g. NIST/SEMATECH e-Handbook, 1.3.6.7.2).
    const table: [number, number][] = [
      [1, 12.706],
      [2, 4.303],
      [3, 3.182],
      [4, 2.776],
      [5, 2.571],
      [6, 2.447],
      [7, 2.365],
      [8, 2.306],
      [9, 2.262],
      [10, 2.228],
      [15, 2.131],
      [20, 2.086],
      [29, 2.045],
      [30, 2.042],
      [60, 2.0],
      [120, 1.98],
    ];
    for (const [df, q] of table) expect([df, studentT975(df)]).toEqual([df, expect.closeTo(q, 3) as number]);
    expect(studentT975(100_000)).toBeCloseTo(1.96, 3);
  });

  it("two-sided normal p values: 1.96 → 0.05, 2.576 → 0.01, 0 → 1, far tails → 0", () => {
    expect(normalTwoSidedP(1.959964)).toBeCloseTo(0.05, 6);
    expect(normalTwoSidedP(-2.575829)).toBeCloseTo(0.01, 6);
    expect(normalTwoSidedP(0)).toBeCloseTo(1, 6);
    expect(normalTwoSidedP(40)).toBeLessThan(1e-300);
  });

  it("a bias tracker's interval is t(n − 1) · s / √n over its last N samples, null below two", () => {
    const t = new BiasTracker(3, LABELS.policy[SLOT_FINAL] as (typeof LABELS.policy)[number]);
    const sample = (x: number | null) => ({
      countPct: x,
      errorRatePp: x === null ? null : -x,
      p99Pct: null,
      usersPct: 1,
    });
    t.push(sample(100)); // pushed out by the three below
    expect(t.current()).toMatchObject({ countPct: 100, windows: 1, spread: { countPct: null } });
    t.push(sample(1));
    t.push(sample(null));
    t.push(sample(3));
    // Two samples measured countPct (1 and 3): mean 2, s = √2, half-width t(1) · s / √2 = 12.7062.
    const half = expect.closeTo(12.7062047, 6) as number;
    expect(t.current()).toEqual({
      countPct: 2,
      errorRatePp: -2,
      p99Pct: null,
      usersPct: 1,
      windows: 3,
      spread: { countPct: half, errorRatePp: half, p99Pct: null, usersPct: 0 },
      stage: "final",
      scope: "policy",
      provisional: false,
    });
    expect(t.samples().map((x) => x.countPct)).toEqual([1, null, 3]);
  });
});
