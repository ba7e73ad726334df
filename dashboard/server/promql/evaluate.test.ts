import { describe, expect, it } from "vitest";
import type { DashboardError } from "../errors.js";
import { evaluateInstant } from "./evaluate.js";
import { evaluateRange } from "./range-steps.js";
import { parsePromql } from "./parse.js";
import { testSource, type TestSeries } from "./series.fixture.js";
import type { RangeSeries, Value } from "./values.js";

const T0 = 1_700_000_000; // seconds, a window end
const req = (service: string, policy = "dashboard") => ({
  __name__: "tidemark_requests",
  policy,
  window: "10s",
  service,
});

/** Windows of 10 s ending at T0−20, T0−10, T0 (seconds). */
const SERIES: TestSeries[] = [
  {
    labels: req("api"),
    points: [
      [T0 - 20, 10, "final"],
      [T0 - 10, 20, "final"],
      [T0, 30, "early"],
    ],
  },
  {
    labels: req("web"),
    points: [
      [T0 - 20, 1, "final"],
      [T0 - 10, 2, "final"],
      [T0, 4, "on-time"],
    ],
  },
  { labels: req("api", "billing"), points: [[T0 - 20, 12, "final"]] },
  {
    labels: { __name__: "tidemark_errors", policy: "dashboard", window: "10s", service: "api" },
    points: [
      [T0 - 20, 1, "final"],
      [T0 - 10, 4, "final"],
      [T0, 3, "early"],
    ],
  },
  {
    labels: { __name__: "tidemark_error_ratio", policy: "dashboard", window: "10s", service: "api" },
    points: [[T0, 0.1, "early"]],
    additive: false,
  },
];

const run = (q: string, at = T0, series = SERIES): Value => {
  const v = evaluateInstant(parsePromql(q), testSource(series), at * 1000);
  return v.type === "matrix" ? ({ type: "matrix", series: withPoints(v.series) } as unknown as Value) : v;
};

/** Range series as [time ms, value] points, for readable expectations. */
function withPoints(series: readonly RangeSeries[]) {
  return series.map((s) => ({ labels: s.labels, points: s.times.map((t, i) => [t, s.values[i]]) }));
}
const range = (q: string, r: { startMs: number; endMs: number; stepMs: number }) =>
  withPoints(evaluateRange(parsePromql(q), testSource(SERIES), r));

/** service (or the whole label set) → value, for vector results. */
function byService(v: Value): Record<string, number> {
  if (v.type !== "vector") throw new Error(`expected a vector, got ${v.type}`);
  return Object.fromEntries(v.samples.map((s) => [s.labels["service"] ?? JSON.stringify(s.labels), s.value]));
}

function failure(q: string, at = T0): { code: string; message: string } {
  try {
    run(q, at);
  } catch (err) {
    return { code: (err as DashboardError).code, message: (err as DashboardError).message };
  }
  throw new Error(`${q} evaluated`);
}

describe("evaluateInstant", () => {
  it("computes scalar arithmetic with Go semantics (1+1 is Grafana's health check)", () => {
    expect(run("1+1")).toEqual({ type: "scalar", value: 2 });
    expect(run("2 ^ 3 ^ 2")).toEqual({ type: "scalar", value: 512 });
    expect(run("-2 ^ 2")).toEqual({ type: "scalar", value: -4 });
    expect(run("7 % -3")).toEqual({ type: "scalar", value: 1 });
    expect(run("1 / 0")).toEqual({ type: "scalar", value: Infinity });
    expect(run("1 ^ NaN")).toEqual({ type: "scalar", value: 1 });
    expect(run("(1 + 2) * 3 - 4 / 2")).toEqual({ type: "scalar", value: 7 });
    expect(run("3 > bool 2")).toEqual({ type: "scalar", value: 1 });
    expect(run('"tidemark"')).toEqual({ type: "string", value: "tidemark" });
  });

  it("selects the newest sample at or before the time, with its pane_kind", () => {
    const v = run('tidemark_requests{policy="dashboard"}');
    expect(v.type === "vector" && v.samples).toEqual([
      { labels: { ...req("api"), pane_kind: "early" }, value: 30 },
      { labels: { ...req("web"), pane_kind: "on-time" }, value: 4 },
    ]);
    expect(byService(run('tidemark_requests{policy="dashboard"}', T0 - 5))).toEqual({ api: 20, web: 2 });
    expect(byService(run('tidemark_requests{policy="dashboard", pane_kind="final"}'))).toEqual({ api: 20, web: 2 });
    expect(byService(run('tidemark_requests{service=~"a.*", policy!="billing"}'))).toEqual({ api: 30 });
    expect(byService(run('tidemark_requests{service!~"api|web"}'))).toEqual({});
  });

  it("looks back 5 minutes (closed at both ends, as Prometheus 2.42), or a window's own size when longer", () => {
    expect(byService(run('tidemark_requests{policy="billing"}', T0 - 20 + 300))).toEqual({ api: 12 });
    expect(byService(run('tidemark_requests{policy="billing"}', T0 - 20 + 300.001))).toEqual({});
    const hourly: TestSeries[] = [{ labels: req("api"), points: [[T0, 5]], stepMs: 3_600_000 }];
    expect(byService(run("tidemark_requests", T0 + 3600, hourly))).toEqual({ api: 5 });
    expect(byService(run("tidemark_requests", T0 + 3600.001, hourly))).toEqual({});
  });

  it("applies offset to selectors and ranges", () => {
    expect(byService(run('tidemark_requests{policy="dashboard"} offset 10s'))).toEqual({ api: 20, web: 2 });
    expect(byService(run('increase(tidemark_requests{policy="dashboard"}[20s] offset 10s)'))).toEqual({
      api: 30,
      web: 3,
    });
  });

  it("increase sums the windows' counts in the range and rate divides by the range's seconds", () => {
    expect(byService(run('increase(tidemark_requests{policy="dashboard"}[30s])'))).toEqual({ api: 60, web: 7 });
    expect(byService(run('increase(tidemark_requests{policy="dashboard"}[20s])'))).toEqual({ api: 50, web: 6 });
    expect(byService(run('rate(tidemark_requests{policy="dashboard"}[30s])'))).toEqual({ api: 2, web: 7 / 30 });
    const v = run('rate(tidemark_requests{service="web"}[1m])');
    expect(v.type === "vector" && v.samples[0]?.labels).toEqual({ policy: "dashboard", window: "10s", service: "web" });
  });

  it("keeps avg/max/min_over_time exactly Prometheus's, without __name__ and pane_kind", () => {
    // Prometheus's running mean: 1, then 1 + (2/2 − 1/2) = 1.5, then 1.5 + (4/3 − 1.5/3).
    expect(byService(run('avg_over_time(tidemark_requests{policy="dashboard"}[30s])'))).toEqual({
      api: 20,
      web: 1.5 + (4 / 3 - 1.5 / 3),
    });
    expect(byService(run('max_over_time(tidemark_requests{policy="dashboard"}[25s])'))).toEqual({ api: 30, web: 4 });
    expect(byService(run('min_over_time(tidemark_requests{policy="dashboard"}[15s])'))).toEqual({ api: 20, web: 2 });
    expect(byService(run("avg_over_time(tidemark_error_ratio[1m])"))).toEqual({ api: 0.1 });
    expect(byService(run('max_over_time(tidemark_requests{policy="dashboard", pane_kind="final"}[1m])'))).toEqual({
      api: 20,
      web: 2,
    });
  });

  it("refuses rate/increase of a gauge and ranges shorter than a window (422)", () => {
    expect(failure("rate(tidemark_error_ratio[1m])")).toEqual({
      code: "TM_PROMQL_EXECUTION",
      message:
        "rate() adds up per-window counts, but tidemark_error_ratio is a per-window gauge (a ratio, quantile, rate or bias): use avg_over_time, max_over_time or min_over_time on tidemark_error_ratio[1m]",
    });
    expect(failure("increase(tidemark_requests[5s])").message).toBe(
      "increase() over tidemark_requests[5s]: the range is shorter than the 10s window of tidemark_requests, so no window fits in it; use a range of at least 10s",
    );
  });

  it("aggregates with by and without, dropping __name__", () => {
    const sum = run('sum by (policy) (tidemark_requests{service=~".+"})');
    expect(sum.type === "vector" && sum.samples).toEqual([
      { labels: { policy: "billing" }, value: 12 },
      { labels: { policy: "dashboard" }, value: 34 },
    ]);
    expect(run("sum(tidemark_requests)")).toEqual({ type: "vector", samples: [{ labels: {}, value: 46 }] });
    expect(run("count(tidemark_requests)")).toEqual({ type: "vector", samples: [{ labels: {}, value: 3 }] });
    expect(run('avg(tidemark_requests{policy="dashboard"})')).toEqual({
      type: "vector",
      samples: [{ labels: {}, value: 17 }],
    });
    expect(run("max(tidemark_requests)")).toEqual({ type: "vector", samples: [{ labels: {}, value: 30 }] });
    expect(run("min(tidemark_requests)")).toEqual({ type: "vector", samples: [{ labels: {}, value: 4 }] });
    const without = run('max without (pane_kind, service) (tidemark_requests{policy="dashboard"})');
    expect(without.type === "vector" && without.samples).toEqual([
      { labels: { policy: "dashboard", window: "10s" }, value: 30 },
    ]);
  });

  it("topk keeps the elements' labels, largest first, per group", () => {
    const v = run("topk(2, tidemark_requests)");
    expect(v.type === "vector" && v.samples.map((s) => [s.labels["policy"], s.labels["service"], s.value])).toEqual([
      ["dashboard", "api", 30],
      ["billing", "api", 12],
    ]);
    // Groups come in the order of their first sample (series in label order), as Prometheus's.
    const g = run("topk by (policy) (1, tidemark_requests)");
    expect(g.type === "vector" && g.samples.map((s) => [s.labels["policy"], s.value])).toEqual([
      ["billing", 12],
      ["dashboard", 30],
    ]);
    expect(run("topk(0, tidemark_requests)")).toEqual({ type: "vector", samples: [] });
  });

  it("filters with comparisons, keeping __name__, and gives 0/1 with bool, dropping it", () => {
    const f = run('tidemark_requests{policy="dashboard"} > 10');
    expect(f.type === "vector" && f.samples.map((s) => [s.labels["__name__"], s.labels["service"], s.value])).toEqual([
      ["tidemark_requests", "api", 30],
    ]);
    expect(byService(run('10 < tidemark_requests{policy="dashboard"}'))).toEqual({ api: 30 });
    const b = run('tidemark_requests{policy="dashboard"} >= bool 4');
    expect(b.type === "vector" && b.samples.map((s) => [s.labels["__name__"], s.labels["service"], s.value])).toEqual([
      [undefined, "api", 1],
      [undefined, "web", 1],
    ]);
    expect(byService(run('tidemark_requests{policy="dashboard"} == 4'))).toEqual({ web: 4 });
    expect(byService(run('tidemark_requests{policy="dashboard"} != 4'))).toEqual({ api: 30 });
    expect(byService(run('tidemark_requests{policy="dashboard"} <= 4'))).toEqual({ web: 4 });
  });

  it("computes vector–scalar and vector–vector arithmetic with one-to-one matching", () => {
    expect(byService(run('tidemark_requests{policy="dashboard"} * 2 - 1'))).toEqual({ api: 59, web: 7 });
    expect(byService(run('-tidemark_requests{policy="dashboard"}'))).toEqual({ api: -30, web: -4 });
    const ratio = run('tidemark_errors / tidemark_requests{policy="dashboard"}');
    expect(ratio.type === "vector" && ratio.samples).toEqual([
      { labels: { policy: "dashboard", window: "10s", service: "api", pane_kind: "early" }, value: 0.1 },
    ]);
    expect(byService(run('tidemark_errors / on(service) tidemark_requests{policy="dashboard"}'))).toEqual({ api: 0.1 });
    expect(
      byService(run('tidemark_errors offset 10s / ignoring(pane_kind) tidemark_requests{policy="dashboard"}')),
    ).toEqual({ api: 4 / 30 });
    expect(byService(run('tidemark_errors > bool on(service) tidemark_requests{policy="dashboard"}'))).toEqual({
      api: 0,
    });
  });

  it("refuses many-to-one matches with Prometheus's message (422)", () => {
    expect(failure('tidemark_errors / on(window) tidemark_requests{policy="dashboard"}').message).toMatch(
      /^found duplicate series for the match group \{window="10s"\} on the right hand-side of the operation/,
    );
    expect(failure('tidemark_requests{policy="dashboard"} / on(window) tidemark_errors').message).toMatch(
      /^multiple matches for labels: many-to-one matching must be explicit \(group_left\/group_right\)$/,
    );
  });

  it("returns a range vector's raw samples for a top-level range selector", () => {
    const v = run('tidemark_requests{service="web"}[15s]');
    expect(v).toEqual({
      type: "matrix",
      series: [
        {
          labels: req("web"),
          points: [
            [(T0 - 10) * 1000, 2],
            [T0 * 1000, 4],
          ],
        },
      ],
    });
  });

  it("reports the samples it used through touch()", () => {
    const source = testSource(SERIES);
    evaluateInstant(parsePromql('sum(tidemark_requests{policy="dashboard"} offset 10s)'), source, T0 * 1000);
    expect(source.touched.map((s) => [...s])).toEqual([[1], [1], [], [], []]);
  });
});

describe("evaluateRange", () => {
  it("evaluates at every step, grouping points by label set (pane_kind splits a series where it changes)", () => {
    const s = range('tidemark_requests{service="api", policy="dashboard"}', {
      startMs: (T0 - 20) * 1000,
      endMs: T0 * 1000,
      stepMs: 10_000,
    });
    expect(s).toEqual([
      {
        labels: { ...req("api"), pane_kind: "early" },
        points: [[T0 * 1000, 30]],
      },
      {
        labels: { ...req("api"), pane_kind: "final" },
        points: [
          [(T0 - 20) * 1000, 10],
          [(T0 - 10) * 1000, 20],
        ],
      },
    ]);
  });

  it("walks a plain selector with a cursor exactly as per-step evaluation would (offset, lookback, pane_kind)", () => {
    const steps = { startMs: (T0 - 40) * 1000, endMs: (T0 + 320) * 1000, stepMs: 3000 };
    for (const sel of [
      "tidemark_requests",
      'tidemark_requests{pane_kind="final"} offset 7s',
      "tidemark_errors offset -12s",
    ]) {
      const perStep = `max by (__name__, policy, window, service, pane_kind) (${sel})`;
      expect(range(sel, steps), sel).toEqual(range(perStep, steps));
      expect(range(sel, steps).length, sel).toBeGreaterThan(0);
    }
  });

  it("gives a scalar one series without labels, and aggregations one series per group", () => {
    const steps = { startMs: (T0 - 10) * 1000, endMs: T0 * 1000, stepMs: 5000 };
    expect(range("1+1", steps)).toEqual([
      {
        labels: {},
        points: [
          [(T0 - 10) * 1000, 2],
          [(T0 - 5) * 1000, 2],
          [T0 * 1000, 2],
        ],
      },
    ]);
    const sum = evaluateRange(
      parsePromql('sum by (service) (tidemark_requests{policy="dashboard"})'),
      testSource(SERIES),
      steps,
    );
    expect(sum.map((x) => [x.labels, x.values])).toEqual([
      [{ service: "api" }, [20, 20, 30]],
      [{ service: "web" }, [2, 2, 4]],
    ]);
  });

  it("refuses range vectors and strings as a range query's expression (400)", () => {
    const steps = { startMs: 0, endMs: 1000, stepMs: 1000 };
    expect(() => evaluateRange(parsePromql("x[5m]"), testSource([]), steps)).toThrow(
      'invalid expression type "range vector" for range query, must be Scalar or instant Vector',
    );
    expect(() => evaluateRange(parsePromql('"s"'), testSource([]), steps)).toThrow('invalid expression type "string"');
  });
});
