/**
 * Functions as Prometheus 2.42 defines them (promql/functions.go), on a series whose values are
 * small enough to work out by hand: x = 1, 4, 2, 8 at 10, 20, 30, 40 s.
 */
import { describe, expect, it } from "vitest";
import type { DashboardError } from "../errors.js";
import { evaluateInstant } from "./evaluate.js";
import { evaluateRange } from "./range-steps.js";
import { parsePromql } from "./parse.js";
import { testSource, type TestSeries } from "./series.fixture.js";
import type { Sample, Value } from "./values.js";

const X: TestSeries = {
  labels: { __name__: "x", job: "a" },
  points: [
    [10, 1],
    [20, 4],
    [30, 2],
    [40, 8],
  ],
};
const Y: TestSeries = { labels: { __name__: "y", job: "b", env: "prod" }, points: [[40, -2.5]] };

function run(q: string, atS = 40): Value {
  return evaluateInstant(parsePromql(q), testSource([X, Y]), atS * 1000);
}

function one(q: string, atS = 40): number {
  const v = run(q, atS);
  if (v.type === "scalar") return v.value;
  if (v.type !== "vector" || v.samples.length !== 1) throw new Error(`${q}: ${JSON.stringify(v)}`);
  return (v.samples[0] as Sample).value;
}

function samples(q: string, atS = 40): Sample[] {
  const v = run(q, atS);
  if (v.type !== "vector") throw new Error(`${q}: not a vector`);
  return v.samples;
}

function failure(q: string): string {
  try {
    run(q);
  } catch (err) {
    return `${(err as DashboardError).code}: ${(err as DashboardError).message}`;
  }
  throw new Error(`${q} evaluated`);
}

describe("functions over range vectors", () => {
  it("read [t − range, t], closed at both ends as in Prometheus 2.42", () => {
    expect(one("count_over_time(x[30s])")).toBe(4); // 10 s is t − 30 s: in
    expect(one("count_over_time(x[29s])")).toBe(3);
    expect(one("sum_over_time(x[29s])")).toBe(14);
  });

  it("the *_over_time family", () => {
    expect(one("sum_over_time(x[30s])")).toBe(15);
    expect(one("avg_over_time(x[30s])")).toBe(3.75);
    expect(one("min_over_time(x[30s])")).toBe(1);
    expect(one("max_over_time(x[30s])")).toBe(8);
    expect(one("last_over_time(x[30s])")).toBe(8);
    expect(one("present_over_time(x[30s])")).toBe(1);
    // mean 3.75; squared deviations 7.5625 + 0.0625 + 3.0625 + 18.0625 = 28.75, / 4
    expect(one("stdvar_over_time(x[30s])")).toBe(7.1875);
    expect(one("stddev_over_time(x[30s])")).toBe(Math.sqrt(7.1875));
    // sorted 1 2 4 8, rank 0.5 × 3 = 1.5: halfway between 2 and 4
    expect(one("quantile_over_time(0.5, x[30s])")).toBe(3);
    expect(one("quantile_over_time(-1, x[30s])")).toBe(-Infinity);
    expect(one("quantile_over_time(2, x[30s])")).toBe(Infinity);
    expect(samples("last_over_time(x[30s])")[0]?.labels).toEqual({ __name__: "x", job: "a" });
    expect(samples("max_over_time(x[30s])")[0]?.labels).toEqual({ job: "a" });
  });

  it("changes, resets, delta, idelta, deriv, predict_linear, holt_winters", () => {
    expect(one("changes(x[30s])")).toBe(3);
    expect(one("resets(x[30s])")).toBe(1); // 4 → 2
    expect(one("delta(x[30s])")).toBe(7); // first and last sample on the range's ends: no extrapolation
    // range [5 s, 40 s]: 5 s to the first sample < 1.1 × the 10 s spacing, so extrapolated: 7 × 35 / 30
    expect(one("delta(x[35s])")).toBeCloseTo((7 * 35) / 30, 14);
    expect(one("idelta(x[30s])")).toBe(6);
    // x − 10 s = 0, 10, 20, 30; y = 1, 4, 2, 8: cov 95, var 500
    expect(one("deriv(x[30s])")).toBeCloseTo(0.19, 15);
    // intercept at t = 40 s: 3.75 + 0.19 × 15 = 6.6; 10 s on: + 1.9
    expect(one("predict_linear(x[30s], 10)")).toBeCloseTo(8.5, 14);
    // s1 = 1, b = 3 → 4 → (b 3) 4.5 → (b 1.75) 7.125
    expect(one("holt_winters(x[30s], 0.5, 0.5)")).toBe(7.125);
    expect(failure("holt_winters(x[30s], 1, 0.5)")).toBe(
      "TM_PROMQL_EXECUTION: invalid smoothing factor. Expected: 0 < sf < 1, got: 1.000000",
    );
    expect(samples("deriv(x[5s])")).toEqual([]); // one point: no answer
  });

  it("absent_over_time: 1 with the selector's equality labels when nothing is in the range", () => {
    expect(samples("absent_over_time(x[30s])")).toEqual([]);
    expect(samples('absent_over_time(nope{a="b", c=~"d"}[30s])')).toEqual([{ labels: { a: "b" }, value: 1 }]);
  });
});

describe("functions over instant vectors and scalars", () => {
  it("math drops __name__; sgn, clamp, round as Prometheus", () => {
    expect(samples("abs(y)")).toEqual([{ labels: { job: "b", env: "prod" }, value: 2.5 }]);
    expect(one("sgn(y)")).toBe(-1);
    expect(one("ceil(y)")).toBe(-2);
    expect(one("floor(y)")).toBe(-3);
    expect(one("round(y)")).toBe(-2); // ties go up: floor(−2.5 + 0.5)
    expect(one("round(x, 3)")).toBe(9);
    expect(one("clamp(x, 2, 5)")).toBe(5);
    expect(samples("clamp(x, 5, 2)")).toEqual([]);
    expect(one("clamp_min(y, 0)")).toBe(0);
    expect(one("clamp_max(x, 3)")).toBe(3);
    expect(one("log2(x)")).toBe(3);
    expect(one("deg(x)")).toBe((8 * 180) / Math.PI);
  });

  it("timestamp reads a selector's sample time, else the evaluation time", () => {
    expect(one("timestamp(x)", 45)).toBe(40);
    expect(one("timestamp(x offset 10s)", 45)).toBe(30);
    expect(one("timestamp(abs(x))", 45)).toBe(45);
    expect(one("time()", 45)).toBe(45);
  });

  it("scalar, vector, absent, sort, sort_desc", () => {
    expect(one("scalar(x)")).toBe(8);
    expect(one('scalar({job=~".+"})')).toBeNaN();
    expect(samples("vector(2)")).toEqual([{ labels: {}, value: 2 }]);
    expect(samples("absent(x)")).toEqual([]);
    expect(samples('absent(nope{a="b", a="c", d="e", f!="g"})')).toEqual([{ labels: { d: "e" }, value: 1 }]);
    expect(samples('sort({job=~".+"})').map((s) => s.value)).toEqual([-2.5, 8]);
    expect(samples('sort_desc({job=~".+"})').map((s) => s.value)).toEqual([8, -2.5]);
    expect(samples('sort({job=~".+"} / 0)').map((s) => s.value)).toEqual([-Infinity, Infinity]);
  });

  it("label_replace and label_join, with Go's $1 and ${name} expansion", () => {
    expect(samples('label_replace(x, "dst", "<$1-${v}>", "job", "(?P<v>a)")')[0]?.labels).toEqual({
      __name__: "x",
      job: "a",
      dst: "<a-a>",
    });
    expect(samples('label_replace(x, "job", "", "job", ".*")')[0]?.labels).toEqual({ __name__: "x" });
    expect(samples('label_replace(x, "dst", "z", "job", "b")')[0]?.labels).toEqual({ __name__: "x", job: "a" });
    expect(samples('label_join(y, "k", "/", "job", "env", "none")')[0]?.labels).toEqual({
      __name__: "y",
      job: "b",
      env: "prod",
      k: "b/prod/",
    });
    expect(failure('label_replace(x, "1bad", "", "job", "")')).toBe(
      "TM_PROMQL_EXECUTION: invalid destination label name in label_replace(): 1bad",
    );
  });

  it("date functions of a unix time, or of the evaluation time", () => {
    const at = "vector(1709251199)"; // 2024-02-29T23:59:59Z, a Thursday
    expect(one(`year(${at})`)).toBe(2024);
    expect(one(`month(${at})`)).toBe(2);
    expect(one(`day_of_month(${at})`)).toBe(29);
    expect(one(`days_in_month(${at})`)).toBe(29);
    expect(one(`day_of_year(${at})`)).toBe(60);
    expect(one(`day_of_week(${at})`)).toBe(4);
    expect(one(`hour(${at})`)).toBe(23);
    expect(one(`minute(${at})`)).toBe(59);
    expect(one("minute()", 125)).toBe(2);
  });

  it("histogram_quantile over bucket series as Prometheus's bucketQuantile; a 422 over series without le", () => {
    const bucket = (le: string, v: number): TestSeries => ({
      labels: { __name__: "h", job: "a", le },
      points: [[40, v]],
    });
    const source = testSource([bucket("0.1", 10), bucket("1", 30), bucket("+Inf", 40)]);
    const q = (phi: number) => evaluateInstant(parsePromql(`histogram_quantile(${phi}, h)`), source, 40_000);
    // rank 20 falls in (0.1, 1]: 10 of its 20 observations in, halfway
    expect(q(0.5)).toEqual({ type: "vector", samples: [{ labels: { job: "a" }, value: 0.55 }] });
    expect(q(0.95)).toEqual({ type: "vector", samples: [{ labels: { job: "a" }, value: 1 }] }); // the +Inf bucket
    expect(failure("histogram_quantile(0.9, x)")).toMatch(
      /^TM_PROMQL_UNSUPPORTED: function histogram_quantile is not supported on series without buckets: x has no "le" label; tidemark ships quantiles/,
    );
  });

  it("rate, increase, irate keep tidemark's per-window meaning", () => {
    expect(one("increase(x[30s])")).toBe(14); // windows ending in (10 s, 40 s]
    expect(one("rate(x[30s])")).toBe(14 / 30);
    expect(one("irate(x[30s])")).toBe(8 / 10); // the newest window's count per second of its 10 s
  });

  it("a range query over functions answers at each step", () => {
    const got = evaluateRange(parsePromql("sum_over_time(x[10s])"), testSource([X]), {
      startMs: 10_000,
      endMs: 40_000,
      stepMs: 15_000,
    });
    expect(got).toEqual([{ labels: { job: "a" }, times: [10_000, 25_000, 40_000], values: [1, 4, 10] }]);
  });
});
