import { describe, expect, it } from "vitest";
import type { PaneBias, PaneValue } from "../../protocol.js";
import { nowcastError, nowcastOf, UNMEASURED_ERROR } from "./nowcast.js";

const value: PaneValue = {
  count: 900,
  errors: 18,
  errorRate: 0.02,
  p50: 40,
  p90: 80,
  p95: 100,
  p99: 198,
  p999: 400,
  users: 95,
};

const bias = (over: Partial<PaneBias> = {}): PaneBias => ({
  countPct: 10,
  errorRatePp: -1.5,
  p99Pct: -1,
  usersPct: 5,
  windows: 12,
  spread: { countPct: 2, errorRatePp: 0.4, p99Pct: 1, usersPct: 1 },
  stage: "on-time",
  scope: "service",
  provisional: false,
  ...over,
});

describe("nowcast: the value corrected by its stage's measured bias", () => {
  it("count / completeness, error rate − bias, p99 / (1 + rel. error), users / completeness; delta-method half-widths", () => {
    const n = nowcastOf(value, bias(), UNMEASURED_ERROR);
    expect(n?.value).toEqual({ count: 1000, errorRate: expect.closeTo(0.035, 12) as number, p99: 200, users: 100 });
    // count: 900 · 2 / (100 · 0.9²); users: 95 · 1 / (100 · 0.95²); p99: 198 · 1 / (100 · 0.99²); error rate: 0.4 pp.
    expect(n?.spread.count).toBeCloseTo((900 * 2) / (100 * 0.81), 9);
    expect(n?.spread.users).toBeCloseTo(95 / (100 * 0.9025), 9);
    expect(n?.spread.p99).toBeCloseTo(198 / (100 * 0.9801), 9);
    expect(n?.spread.errorRate).toBeCloseTo(0.004, 12);
    expect(n?.error).toBe(UNMEASURED_ERROR);
  });

  it("nothing measured: no nowcast; an unmeasured field or spread leaves that value as shown, its half-width null", () => {
    expect(nowcastOf(value, bias({ windows: 0 }), UNMEASURED_ERROR)).toBeNull();
    const n = nowcastOf(
      value,
      bias({ p99Pct: null, spread: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null } }),
      UNMEASURED_ERROR,
    );
    expect([n?.value.p99, n?.spread]).toEqual([198, { count: null, errorRate: null, p99: null, users: null }]);
  });

  it("clamps: an error rate stays within [0, 1], a completeness at or below 0 counts as 1 %", () => {
    const n = nowcastOf(value, bias({ errorRatePp: 5, countPct: 120 }), UNMEASURED_ERROR);
    expect(n?.value.errorRate).toBe(0);
    expect(n?.value.count).toBeCloseTo(90_000, 6);
  });

  it("its error is signed nowcast − reference in every field", () => {
    const e = nowcastError(
      { count: 1000, errors: 40, p99: 200, users: 100 },
      { count: 1010, errorRate: 0.035, p99: 190, users: 100 },
    );
    expect(e.countPct).toBeCloseTo(1, 12);
    expect(e.errorRatePp).toBeCloseTo(-0.5, 12);
    expect(e.p99Pct).toBeCloseTo(-5, 12);
    expect(e.usersPct).toBe(0);
  });
});
