/**
 * Aggregations, vector matching, subqueries and `@` as Prometheus 2.42 computes them
 * (promql/engine.go), on values worked out by hand.
 */
import { describe, expect, it } from "vitest";
import type { DashboardError } from "../errors.js";
import { evaluateInstant } from "./evaluate.js";
import { evaluateRange } from "./range-steps.js";
import { parsePromql } from "./parse.js";
import { testSource, type TestSeries } from "./series.fixture.js";
import type { Sample, Value } from "./values.js";

const at40 = (name: string, labels: Record<string, string>, value: number): TestSeries => ({
  labels: { __name__: name, ...labels },
  points: [[40, value]],
});
const SERIES: TestSeries[] = [
  at40("m", { svc: "a", pol: "p" }, 1),
  at40("m", { svc: "b", pol: "p" }, 4),
  at40("m", { svc: "c", pol: "q" }, 2),
  at40("m", { svc: "d", pol: "q" }, 8),
  at40("info", { pol: "p", owner: "ann" }, 1),
  at40("info", { pol: "q", owner: "bob" }, 1),
  at40("tie", { svc: "a" }, 5),
  at40("tie", { svc: "b" }, 5),
  at40("tie", { svc: "c" }, 5),
  {
    labels: { __name__: "x", job: "a" },
    points: [
      [10, 1],
      [20, 4],
      [30, 2],
      [40, 8],
    ],
  },
];

function run(q: string, atS = 40): Value {
  return evaluateInstant(parsePromql(q), testSource(SERIES), atS * 1000);
}

function samples(q: string, atS = 40): Array<[Record<string, string>, number]> {
  const v = run(q, atS);
  if (v.type !== "vector") throw new Error(`${q}: not a vector`);
  return v.samples.map((s: Sample) => [{ ...s.labels }, s.value]);
}

function failure(q: string): string {
  try {
    run(q);
  } catch (err) {
    return (err as DashboardError).message;
  }
  throw new Error(`${q} evaluated`);
}

describe("aggregations", () => {
  it("stddev, stdvar, group, quantile, count_values, with by / without", () => {
    expect(samples("stdvar(m)")).toEqual([[{}, 7.1875]]); // mean 3.75 of 1 4 2 8
    expect(samples("stddev(m)")).toEqual([[{}, Math.sqrt(7.1875)]]);
    expect(samples("stdvar by (pol) (m)")).toEqual([
      [{ pol: "p" }, 2.25],
      [{ pol: "q" }, 9],
    ]);
    expect(samples("group without (svc) (m)")).toEqual([
      [{ pol: "p" }, 1],
      [{ pol: "q" }, 1],
    ]);
    expect(samples("quantile(0.5, m)")).toEqual([[{}, 3]]);
    const w = 0.9 * 3 - 2; // rank 2.7: between the third (4) and the fourth (8)
    expect(samples("quantile(0.9, m)")).toEqual([[{}, 4 * (1 - w) + 8 * w]]);
    expect(samples("quantile(-0.1, m)")).toEqual([[{}, -Infinity]]);
    expect(samples('count_values("v", tie)')).toEqual([[{ v: "5" }, 3]]);
    expect(samples('count_values without (svc) ("v", m / 2)')).toEqual([
      [{ pol: "p", v: "0.5" }, 1],
      [{ pol: "p", v: "2" }, 1],
      [{ pol: "q", v: "1" }, 1],
      [{ pol: "q", v: "4" }, 1],
    ]);
    expect(samples("sum by (__name__) (m)")).toEqual([[{ __name__: "m" }, 15]]);
    expect(failure('count_values("1x", m)')).toBe('invalid label name "1x"');
  });

  it("topk and bottomk keep whole labels, in value order; a tie keeps the earlier series", () => {
    expect(samples("topk(2, m)")).toEqual([
      [{ __name__: "m", svc: "d", pol: "q" }, 8],
      [{ __name__: "m", svc: "b", pol: "p" }, 4],
    ]);
    expect(samples("bottomk(2, m)").map(([l, v]) => [l["svc"], v])).toEqual([
      ["a", 1],
      ["c", 2],
    ]);
    expect(samples("topk(2, tie)").map(([l]) => l["svc"])).toEqual(["a", "b"]);
    expect(samples("bottomk by (pol) (1, m)").map(([l]) => l["svc"])).toEqual(["a", "c"]);
    expect(failure("topk(NaN, m)")).toBe("Scalar value NaN overflows int64");
  });
});

describe("vector matching", () => {
  it("and, or, unless on all labels but __name__, or on(…) / ignoring(…)", () => {
    expect(samples("m and m > 3").map(([l]) => l["svc"])).toEqual(["b", "d"]);
    expect(samples('m unless on(pol) info{owner="ann"}').map(([l]) => l["svc"])).toEqual(["c", "d"]);
    // m{svc="a"} has a pol label, so no tie series matches it: all of them come.
    expect(samples('m{svc="a"} or tie').map(([l]) => `${l["__name__"]}:${l["svc"]}`)).toEqual([
      "m:a",
      "tie:a",
      "tie:b",
      "tie:c",
    ]);
    expect(samples('tie{svc="a"} or ignoring(pol) m').map(([l]) => `${l["__name__"]}:${l["svc"]}`)).toEqual([
      "m:b",
      "m:c",
      "m:d",
      "tie:a",
    ]);
  });

  it("group_left copies the one side's labels; group_right swaps the sides", () => {
    expect(samples("m * on(pol) group_left(owner) info")).toEqual([
      [{ svc: "a", pol: "p", owner: "ann" }, 1],
      [{ svc: "b", pol: "p", owner: "ann" }, 4],
      [{ svc: "c", pol: "q", owner: "bob" }, 2],
      [{ svc: "d", pol: "q", owner: "bob" }, 8],
    ]);
    expect(samples("info + on(pol) group_right m").map(([l, v]) => [l["svc"], l["owner"], v])).toEqual([
      ["a", undefined, 2],
      ["b", undefined, 5],
      ["c", undefined, 3],
      ["d", undefined, 9],
    ]);
    // A comparison keeps the left side's value (the "one" side here) and the many side's labels.
    expect(samples("info < on(pol) group_right m").map(([l, v]) => [l["svc"], v])).toEqual([
      ["b", 1],
      ["c", 1],
      ["d", 1],
    ]);
  });

  it("refuses many-to-many and ambiguous matches with Prometheus's messages", () => {
    expect(failure("info * on(pol) group_left m")).toMatch(
      /^found duplicate series for the match group \{pol="p"\} on the right hand-side of the operation: .*many-to-many matching not allowed: matching labels must be unique on one side$/,
    );
    expect(failure("m + on(pol) info")).toBe(
      "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)",
    );
    expect(failure("m * ignoring(svc) group_left tie")).toMatch(/^found duplicate series/);
    expect(failure('label_replace(tie, "svc", "x", "svc", ".*")')).toBe(
      "vector cannot contain metrics with the same labelset",
    );
  });
});

describe("subqueries and @", () => {
  it("a subquery evaluates at the multiples of its step in [t − range, t]", () => {
    const one = (q: string) => samples(q)[0]?.[1];
    expect(one("max_over_time(x[30s:10s])")).toBe(8);
    expect(one("count_over_time(x[30s:10s])")).toBe(4);
    expect(one("min_over_time(x[30s:20s])")).toBe(4); // 20 s and 40 s only
    expect(one("sum_over_time(x[30s:10s] offset 10s)")).toBe(7); // 0 s (no sample), 10, 20, 30
    expect(one("last_over_time(x[30s:10s] @ 20)")).toBe(4);
  });

  it("a subquery meets counted bounds: points per step, evaluations per query (422)", () => {
    expect(failure("max_over_time(x[1h:100ms])")).toBe(
      'subquery x[1h:100ms] needs 36001 points at each step; at most 11000 are evaluated: use a larger subquery step or a shorter range (docs/prometheus-api.md, "PromQL")',
    );
    const long = () =>
      evaluateRange(parsePromql("max_over_time(x[1s:1s])"), testSource(SERIES), {
        startMs: 0,
        endMs: 200_000_000,
        stepMs: 1000,
      });
    expect(long).toThrow(/^subquery x\[1s:1s\] needs more than 100000 evaluations over the query/);
  });

  it("@ fixes a selector's time whatever the step; start() and end() are the query's", () => {
    expect(samples("x @ 20", 40)).toEqual([[{ __name__: "x", job: "a" }, 4]]);
    const range = { startMs: 20_000, endMs: 40_000, stepMs: 10_000 };
    const got = (q: string) => evaluateRange(parsePromql(q), testSource(SERIES), range)[0]?.values;
    expect(got("x @ start()")).toEqual([4, 4, 4]);
    expect(got("x @ end() - x")).toEqual([4, 6, 0]);
    expect(got("sum_over_time(x[10s] @ end())")).toEqual([10, 10, 10]);
    expect(got("x offset -10s")).toEqual([2, 8, 8]);
  });
});
