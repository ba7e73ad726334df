import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PaneBias } from "./pane-bias.js";
import { NO_BIAS, poolBias } from "./bias-pooling.js";

const FIELDS = ["countPct", "errorRatePp", "p99Pct", "usersPct"] as const;

/** One part as the engine measures it: per closed window, a raw bias value per field (null: not measured). */
interface RawPart {
  windows: Array<Record<(typeof FIELDS)[number], number | null>>;
  /** The part's interval half-width per field (null: too few samples). */
  halfWidth: Record<(typeof FIELDS)[number], number | null>;
}

const value = fc.double({ min: -100, max: 100, noNaN: true });
const field = fc.option(value, { nil: null, freq: 4 });
const rawPart: fc.Arbitrary<RawPart> = fc.record({
  windows: fc.array(fc.record({ countPct: value, errorRatePp: value, p99Pct: value, usersPct: field }), {
    minLength: 1,
    maxLength: 12,
  }),
  halfWidth: fc.record({
    countPct: fc.option(fc.double({ min: 0, max: 10, noNaN: true }), { nil: null, freq: 5 }),
    errorRatePp: fc.double({ min: 0, max: 10, noNaN: true }),
    p99Pct: fc.double({ min: 0, max: 10, noNaN: true }),
    usersPct: fc.double({ min: 0, max: 10, noNaN: true }),
  }),
});

/** A part's measured bias: the mean of its windows' raw values (null when a field is unmeasured in any). */
function measured(part: RawPart): PaneBias {
  const mean = (f: (typeof FIELDS)[number]): number | null => {
    const xs = part.windows.map((w) => w[f]);
    return xs.some((x) => x === null) ? null : (xs as number[]).reduce((a, b) => a + b, 0) / xs.length;
  };
  return {
    countPct: mean("countPct"),
    errorRatePp: mean("errorRatePp"),
    p99Pct: mean("p99Pct"),
    usersPct: mean("usersPct"),
    windows: part.windows.length,
    spread: { ...part.halfWidth },
  };
}

/**
 * Brute force over the raw points: every window of every part that measured the field, each
 * carrying its own value and its part's half-width, averaged with equal weight.
 */
function pooledByBruteForce(parts: RawPart[], f: (typeof FIELDS)[number]): { mean: number | null; hw: number | null } {
  const points: Array<{ v: number; h: number | null }> = [];
  for (const p of parts) {
    if (p.windows.some((w) => w[f] === null)) continue;
    for (const w of p.windows) points.push({ v: w[f] as number, h: p.halfWidth[f] });
  }
  if (points.length === 0) return { mean: null, hw: null };
  const mean = points.reduce((a, x) => a + x.v, 0) / points.length;
  const hw = points.some((x) => x.h === null) ? null : points.reduce((a, x) => a + (x.h as number), 0) / points.length;
  return { mean, hw };
}

function close(actual: number | null, expected: number | null): void {
  if (expected === null) return expect(actual).toBeNull();
  expect(actual).not.toBeNull();
  // Sums of at most ~100 doubles of magnitude ≤ 100, in another order: a few ulps of 1e4.
  expect(Math.abs((actual as number) - expected)).toBeLessThanOrEqual(1e-9);
}

describe("poolBias", () => {
  it("equals pooling the parts' raw windows: window-weighted means and half-widths, the largest N", () => {
    fc.assert(
      fc.property(fc.array(rawPart, { minLength: 1, maxLength: 8 }), (parts) => {
        const pooled = poolBias(parts.map(measured));
        for (const f of FIELDS) {
          const oracle = pooledByBruteForce(parts, f);
          close(pooled[f], oracle.mean);
          close(pooled.spread?.[f] ?? null, oracle.hw);
        }
        expect(pooled.windows).toBe(Math.max(...parts.map((p) => p.windows.length)));
      }),
      { numRuns: 500 },
    );
  });

  it("does not depend on the order of the parts (pairwise folding did for three or more)", () => {
    const a = { ...NO_BIAS, countPct: 1, windows: 30 };
    const b = { ...NO_BIAS, countPct: 2, windows: 30 };
    const c = { ...NO_BIAS, countPct: 4, windows: 10 };
    // (1·30 + 2·30 + 4·10) / 70 = 130 / 70.
    for (const order of [
      [a, b, c],
      [c, a, b],
      [b, c, a],
    ])
      expect(poolBias(order).countPct).toBeCloseTo(130 / 70, 12);
  });

  it("one part is itself; none is nothing measured", () => {
    const one: PaneBias = {
      countPct: 1.5,
      errorRatePp: -0.2,
      p99Pct: null,
      usersPct: 3,
      windows: 7,
      spread: { countPct: 0.4, errorRatePp: null, p99Pct: null, usersPct: 1 },
      stage: "final",
      scope: "service",
      provisional: false,
    };
    expect(poolBias([one])).toEqual(one);
    expect(poolBias([])).toEqual(NO_BIAS);
  });

  it("a part without a window or a value does not weigh in; without any window, values count alike", () => {
    const m = { ...NO_BIAS, countPct: 2, windows: 5 };
    expect(poolBias([{ ...NO_BIAS, countPct: 50, windows: 0 }, m]).countPct).toBe(2);
    expect(poolBias([{ ...NO_BIAS, windows: 40 }, m]).countPct).toBe(2);
    const p1 = { ...NO_BIAS, countPct: 1, provisional: true };
    const p2 = { ...NO_BIAS, countPct: 3, provisional: true };
    expect(poolBias([p1, p2])).toMatchObject({ countPct: 2, windows: 0, provisional: true });
  });

  it("keeps stage and age only when all parts agree; provisional and policy scope stick; spread only when sent", () => {
    const base = { ...NO_BIAS, countPct: 1, windows: 3 };
    const early = { ...base, stage: "early" as const, age: "0-0.25" as const, scope: "service" as const };
    expect(poolBias([early, early])).toMatchObject({ stage: "early", age: "0-0.25", scope: "service" });
    const mixed = poolBias([early, { ...early, age: "1+0" }, { ...base, scope: "policy", provisional: true }]);
    expect(mixed.stage).toBeUndefined();
    expect(mixed.age).toBeUndefined();
    expect(mixed).toMatchObject({ scope: "policy", provisional: true });
    expect("spread" in poolBias([base, base])).toBe(false);
    const sent = { ...base, spread: { countPct: 0.5, errorRatePp: null, p99Pct: null, usersPct: null } };
    // A weighing part without a half-width leaves the pooled one unknown: never narrower than measured.
    expect(poolBias([sent, base]).spread?.countPct).toBeNull();
    expect(poolBias([sent, sent]).spread?.countPct).toBe(0.5);
  });
});
