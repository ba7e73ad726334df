import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DDSketch as OracleSketch } from "@datadog/sketches-js";
import { exactQuantile, sample, type DistributionName } from "./bench/distributions.js";
import { BinStore } from "./bin-store.js";
import { DDSketch } from "./ddsketch.js";
import { LogMapping } from "./log-mapping.js";
import { SketchError } from "./errors.js";

const QUANTILES = [0, 0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1];
const ALPHA = 0.01;
/** α plus float rounding at bin boundaries. */
const TOLERANCE = ALPHA + 1e-9;

function relErr(estimate: number, exact: number): number {
  return exact === 0 ? Math.abs(estimate) : Math.abs(estimate - exact) / exact;
}

function sketchOf(values: Float64Array): DDSketch {
  const s = new DDSketch();
  for (const v of values) s.add(v);
  return s;
}

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return e instanceof SketchError ? e.code : `not a SketchError: ${String(e)}`;
  }
  return undefined;
}

describe("DDSketch accuracy", () => {
  const cases: [DistributionName, number][] = [
    ["lognormal", 10],
    ["lognormal", 1000],
    ["lognormal", 1_000_000],
    ["pareto", 10],
    ["pareto", 100_000],
    ["bimodal", 50],
    ["bimodal", 100_000],
    ["constant", 10],
    ["constant", 10_000],
  ];
  it.each(cases)("%s × %i: every quantile within α of the exact one", (name, n) => {
    const values = sample(name, n, n + name.length);
    const s = sketchOf(values);
    const sorted = values.slice().sort();
    for (const q of QUANTILES) {
      const exact = exactQuantile(sorted, q);
      expect(relErr(s.quantile(q), exact), `q=${q} exact=${exact}`).toBeLessThanOrEqual(TOLERANCE);
    }
    expect(s.count).toBe(n);
    expect(s.min).toBe(sorted[0]);
    expect(s.max).toBe(sorted[n - 1]);
    const exactSum = values.reduce((a, b) => a + b, 0);
    expect(relErr(s.sum, exactSum)).toBeLessThan(1e-9);
  });

  it("agrees with @datadog/sketches-js within 2α on every quantile", () => {
    const values = sample("lognormal", 20_000, 7);
    const ours = sketchOf(values);
    const oracle = new OracleSketch({ relativeAccuracy: ALPHA });
    for (const v of values) oracle.accept(v);
    for (const q of QUANTILES.slice(1, -1)) {
      const theirs = oracle.getValueAtQuantile(q) as number;
      expect(relErr(ours.quantile(q), theirs), `q=${q}`).toBeLessThanOrEqual(2 * TOLERANCE);
    }
  });

  it("counts zeros exactly and reports them as 0", () => {
    const s = new DDSketch();
    for (let i = 0; i < 60; i++) s.add(0);
    for (let i = 1; i <= 40; i++) s.add(i);
    expect(s.quantile(0.5)).toBe(0);
    expect(s.quantile(0.59)).toBe(0);
    expect(relErr(s.quantile(0.7), 10)).toBeLessThanOrEqual(TOLERANCE);
    expect(s.min).toBe(0);
  });

  it("the rank just past the zeros is the smallest positive value", () => {
    const s = new DDSketch();
    s.add(0, 60);
    for (let i = 1; i <= 41; i++) s.add(i);
    // rank 0.6 · 100 = 60: the 61st element, the first positive one.
    expect(relErr(s.quantile(0.6), 1)).toBeLessThanOrEqual(TOLERANCE);
    expect(s.quantile(0.599)).toBe(0);
  });

  it("is NaN when empty and accepts weighted adds", () => {
    const s = new DDSketch();
    expect(s.quantile(0.5)).toBeNaN();
    expect(s.min).toBeNaN();
    s.add(5, 3);
    s.add(100, 1);
    expect(s.count).toBe(4);
    expect(s.sum).toBe(115);
    expect(relErr(s.quantile(0.5), 5)).toBeLessThanOrEqual(TOLERANCE);
  });

  it("collapses the lowest bins beyond 2048 and keeps the high quantiles accurate", () => {
    const s = new DDSketch();
    const values: number[] = [];
    // 1e-12 … 1e12 spans ~2760 bins at α = 0.01.
    for (let e = -12; e <= 12; e += 0.01) values.push(10 ** e);
    for (const v of values) s.add(v);
    const sorted = Float64Array.from(values).sort();
    for (const q of [0.5, 0.9, 0.99, 1])
      expect(relErr(s.quantile(q), exactQuantile(sorted, q))).toBeLessThanOrEqual(TOLERANCE);
    expect(s.count).toBe(values.length);
    // A value below the collapsed floor still counts, and the sketch still round-trips.
    s.add(1e-20);
    const back = DDSketch.decode(s.encode());
    expect(back.count).toBe(values.length + 1);
    expect(back.quantile(0.99)).toBe(s.quantile(0.99));
    back.remove(1e-20);
    expect(back.count).toBe(values.length);
  });
});

describe("DDSketch quantiles", () => {
  it("answers like quantile() for each q, in any order, in both forms", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { maxLength: 300 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 8 }),
        fc.nat(40),
        (values, qs, zeros) => {
          const s = new DDSketch();
          for (const v of values) s.add(v);
          if (zeros > 0) s.add(0, zeros);
          expect(s.quantiles(qs)).toEqual(qs.map((q) => s.quantile(q)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("answers like quantile() for ascending qs (a pane's five, or drawn) after merges, removals and collapses", () => {
    const pane = [0.5, 0.9, 0.95, 0.99, 0.999];
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { maxLength: 300 }),
        fc.array(fc.double({ min: 1e-9, max: 1e9, noNaN: true }), { maxLength: 100 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 8 }),
        fc.nat(20),
        fc.boolean(),
        (values, more, drawn, removals, wide) => {
          const s = new DDSketch();
          for (const v of values) s.add(v);
          const other = new DDSketch();
          for (const v of more) other.add(v);
          // Values over 1e-9 … 1e9 at α = 0.01 span ~2000 keys: near or beyond the 2048-bin collapse.
          if (wide) for (let e = -9; e <= 9; e += 0.5) other.add(10 ** e);
          s.merge(other);
          for (const v of values.slice(0, removals)) s.remove(v);
          const qs = [...drawn].sort((a, b) => a - b);
          expect(s.quantiles(pane)).toEqual(pane.map((q) => s.quantile(q)));
          expect(s.quantiles(qs)).toEqual(qs.map((q) => s.quantile(q)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("rejects a q outside [0, 1]", () => {
    const s = new DDSketch();
    for (let i = 1; i <= 40; i++) s.add(i);
    expect(codeOf(() => s.quantiles([0.5, 2]))).toBe("TM_SKETCH_INVALID_OPTION");
  });
});

describe("DDSketch errors", () => {
  it("rejects negative, NaN and infinite values with stable codes and changes nothing", () => {
    const s = new DDSketch();
    s.add(3);
    expect(codeOf(() => s.add(-1))).toBe("TM_SKETCH_NEGATIVE_VALUE");
    expect(codeOf(() => s.add(NaN))).toBe("TM_SKETCH_INVALID_VALUE");
    expect(codeOf(() => s.add(Infinity))).toBe("TM_SKETCH_INVALID_VALUE");
    expect(codeOf(() => s.add(1, 0))).toBe("TM_SKETCH_INVALID_COUNT");
    expect(codeOf(() => s.add(1, 1.5))).toBe("TM_SKETCH_INVALID_COUNT");
    expect(codeOf(() => s.quantile(1.5))).toBe("TM_SKETCH_INVALID_OPTION");
    expect(codeOf(() => new DDSketch({ relativeAccuracy: 0 }))).toBe("TM_SKETCH_INVALID_OPTION");
    expect(s.count).toBe(1);
    expect(s.sum).toBe(3);
  });

  it("the negative-value message names the field and what to do", () => {
    expect(() => new DDSketch().add(-2)).toThrow(/value must be >= 0, got -2/);
  });

  it("refuses to merge sketches of different accuracy", () => {
    expect(codeOf(() => new DDSketch().merge(new DDSketch({ relativeAccuracy: 0.02 })))).toBe("TM_SKETCH_MISMATCH");
  });
});

/** An empty sketch in either form: exact (as new) or binned (17 values added, then removed). */
function fresh(mode: "exact" | "binned"): DDSketch {
  const s = new DDSketch();
  if (mode === "binned") {
    s.add(12345, 17);
    s.remove(12345, 17);
  }
  expect(s.isExact).toBe(mode === "exact");
  return s;
}

describe.each(["exact", "binned"] as const)("DDSketch remove and subtract (%s form)", (mode) => {
  it("remove takes values out; removing an absent value throws and changes nothing", () => {
    const s = fresh(mode);
    for (const v of [1, 2, 3, 100, 0]) s.add(v);
    s.remove(100);
    expect(s.count).toBe(4);
    expect(s.sum).toBe(6);
    expect(relErr(s.max, 3)).toBeLessThanOrEqual(TOLERANCE);
    expect(codeOf(() => s.remove(100))).toBe("TM_SKETCH_NOT_SUBSET");
    expect(codeOf(() => s.remove(3, 2))).toBe("TM_SKETCH_NOT_SUBSET");
    expect(codeOf(() => s.remove(-3))).toBe("TM_SKETCH_NEGATIVE_VALUE");
    s.remove(0);
    expect(codeOf(() => s.remove(0))).toBe("TM_SKETCH_NOT_SUBSET");
    expect(s.count).toBe(3);
    // Exact form: the true minimum; binned: the removed 0 took the exact one, the new one is bin-accurate.
    expect(relErr(s.min, 1)).toBeLessThanOrEqual(mode === "exact" ? 0 : TOLERANCE);
    for (const q of [0, 0.5, 1])
      expect(relErr(s.quantile(q), [1, 2, 3][Math.floor(q * 2)] as number)).toBeLessThanOrEqual(TOLERANCE);
  });

  it("removing every value leaves an empty sketch", () => {
    const s = fresh(mode);
    s.add(7);
    s.remove(7);
    expect(s.count).toBe(0);
    expect(s.sum).toBe(0);
    expect(s.quantile(0.5)).toBeNaN();
    expect(s.max).toBeNaN();
  });

  it("subtract of a sketch that is not a subset throws and changes nothing", () => {
    const a = fresh(mode);
    a.add(10);
    a.add(20);
    const b = new DDSketch();
    b.add(10);
    b.add(30);
    const before = a.encode();
    expect(codeOf(() => a.subtract(b))).toBe("TM_SKETCH_NOT_SUBSET");
    expect(a.encode()).toEqual(before);
    const big = new DDSketch();
    for (let i = 0; i < 40; i++) big.add(10);
    expect(codeOf(() => a.subtract(big))).toBe("TM_SKETCH_NOT_SUBSET");
    expect(a.encode()).toEqual(before);
  });

  it("keeps exact min and max when the extremes stay in the rest", () => {
    const a = fresh(mode);
    for (const v of [1, 5, 9]) a.add(v);
    const prefix = new DDSketch();
    prefix.add(5);
    a.subtract(prefix);
    expect(a.min).toBe(1);
    expect(a.max).toBe(9);
    expect(a.count).toBe(2);
  });

  it("merge and subtract of itself double and empty it", () => {
    const a = fresh(mode);
    for (const v of [4, 8, 15]) a.add(v);
    a.merge(a);
    expect(a.count).toBe(6);
    a.subtract(a);
    expect(a.count).toBe(0);
  });
});

describe("DDSketch forms", () => {
  it("holds up to 16 values exactly, then bins them with the same answers within α", () => {
    const s = new DDSketch();
    const values = sample("lognormal", 17, 99);
    for (let i = 0; i < 16; i++) s.add(values[i] as number);
    expect(s.isExact).toBe(true);
    const sorted16 = values.slice(0, 16).sort();
    for (const q of QUANTILES) expect(s.quantile(q)).toBe(exactQuantile(sorted16, q));
    s.add(values[16] as number);
    expect(s.isExact).toBe(false);
    const sorted = values.slice().sort();
    for (const q of QUANTILES) expect(relErr(s.quantile(q), exactQuantile(sorted, q))).toBeLessThanOrEqual(TOLERANCE);
    expect(s.count).toBe(17);
  });

  it("a weighted add past the exact limit bins at once", () => {
    const s = new DDSketch();
    s.add(3, 20);
    expect(s.isExact).toBe(false);
    expect(s.count).toBe(20);
    expect(s.sum).toBe(60);
  });

  it("treats −0 as 0", () => {
    const s = new DDSketch();
    s.add(-0);
    expect(Object.is(s.min, 0)).toBe(true);
    expect(DDSketch.decode(s.encode()).count).toBe(1);
  });
});

describe("DDSketch bin counts widen as they grow (docs/decisions/0015-light-state.md)", () => {
  it("holds counts past 1, 2 and 4 bytes exactly, in merge, subtract and the codec", () => {
    const s = new DDSketch();
    for (let i = 0; i < 40; i++) s.add(10 + i);
    const counts = [200, 300, 70_000, 5_000_000_000];
    let total = 40;
    for (const c of counts) {
      s.add(25, c);
      total += c;
      expect(s.count).toBe(total);
      expect(DDSketch.decode(s.encode()).bins()).toEqual(s.bins());
    }
    const bin = s.bins().find(([, c]) => c > 5_000_000_000);
    expect(bin?.[1]).toBe(1 + 200 + 300 + 70_000 + 5_000_000_000);
    const copy = s.clone();
    copy.merge(s);
    expect(copy.count).toBe(2 * total);
    copy.subtract(s);
    expect(copy.bins()).toEqual(s.bins());
    expect(copy.quantile(0.5)).toBe(s.quantile(0.5));
  });
});

describe("BinStore counts: the array's own width, widened when a count does not fit it", () => {
  it("a count at each width's limit stays; one more widens (1, 2, 4, 8 bytes a bin), every count kept", () => {
    const b = new BinStore(LogMapping.of(0.01));
    b.addKey(7, 1);
    b.addKey(9, 3);
    // One byte a bin so far: the array's length in bins.
    const len = b.capacityBytes;
    for (const [limit, width] of [
      [0xff, 1],
      [0xffff, 2],
      [0xffffffff, 4],
    ] as const) {
      b.addKey(8, limit - b.countAt(8));
      expect(b.countAt(8)).toBe(limit);
      expect(b.capacityBytes).toBe(len * width);
      b.addKey(8, 1);
      expect(b.countAt(8)).toBe(limit + 1);
      expect(b.capacityBytes).toBe(len * width * 2);
      expect([b.countAt(7), b.countAt(9)]).toEqual([1, 3]);
    }
    expect(b.total).toBe(4 + 0xffffffff + 1);
    const c = b.clone();
    expect(c.capacityBytes).toBe(b.capacityBytes);
    c.addKey(8, 2 ** 40);
    expect(c.countAt(8)).toBe(0xffffffff + 1 + 2 ** 40);
    expect(b.countAt(8)).toBe(0xffffffff + 1);
  });
});
