/**
 * The range evaluation reads each series' samples once into columns and answers rate/increase of
 * integer counts from exact prefix sums (docs/prometheus-api.md, "Sizing"). These tests compare it,
 * on random series, with an oracle written here that follows the documented semantics step by step
 * over the raw points (docs/prometheus-api.md, "Semantics").
 */
import { describe, expect, it } from "vitest";
import { prng } from "../prng.fixture.js";
import { evaluateRange } from "./range-steps.js";
import { signature, type Labels } from "./labels.js";
import { parsePromql } from "./parse.js";
import { testSource, type TestSeries } from "./series.fixture.js";
import type { RangeSeries } from "./values.js";

const KINDS = ["early", "on-time", "late", "final"];
const LOOKBACK_MS = 5 * 60_000;

interface Point {
  ms: number;
  value: number;
  kind: string;
}

/** Random series of windows (10 s or 60 s) with gaps, mixed kinds, integer or fractional values. */
function randomSeries(seed: number): { list: TestSeries[]; points: Point[][]; fromMs: number; toMs: number } {
  const r = prng(seed);
  const fromMs = 1_700_000_000_000;
  const list: TestSeries[] = [];
  const points: Point[][] = [];
  const services = 1 + Math.floor(r() * 4);
  for (let s = 0; s < services; s++) {
    for (const name of ["tidemark_requests", "tidemark_error_ratio"]) {
      const stepMs = r() < 0.7 ? 10_000 : 60_000;
      const fractional = name === "tidemark_error_ratio" || r() < 0.2;
      const pts: Point[] = [];
      for (let ms = fromMs + stepMs; ms < fromMs + 3_600_000; ms += stepMs) {
        if (r() < 0.15) ms += stepMs * Math.floor(r() * 40); // a gap, sometimes past the lookback
        const value = fractional ? r() * (r() < 0.5 ? 1 : 1000) : Math.floor(r() * 500);
        pts.push({ ms, value, kind: KINDS[Math.floor(r() * KINDS.length)] as string });
      }
      points.push(pts);
      list.push({
        labels: { __name__: name, policy: "p", window: `${stepMs / 1000}s`, service: `svc-${s}` },
        points: pts.map((p) => [p.ms / 1000, p.value, p.kind]),
        additive: name === "tidemark_requests",
        stepMs,
      });
    }
  }
  return { list, points, fromMs, toMs: fromMs + 3_600_000 };
}

/** Points grouped by label set, as a range query returns them (sorted by signature). */
function grouped(rows: Array<{ labels: Labels; ts: number; value: number }>): RangeSeries[] {
  const by = new Map<string, RangeSeries>();
  for (const { labels, ts, value } of rows) {
    const sig = signature(labels);
    let s = by.get(sig);
    if (!s) by.set(sig, (s = { labels, times: [], values: [] }));
    s.times.push(ts);
    s.values.push(value);
  }
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
}

function steps(fromMs: number, toMs: number, stepMs: number): number[] {
  const out: number[] = [];
  for (let ts = fromMs; ts <= toMs; ts += stepMs) out.push(ts);
  return out;
}

const withoutName = (labels: Labels): Labels =>
  Object.fromEntries(Object.entries(labels).filter(([n]) => n !== "__name__"));

/** Kahan–Babuška as Prometheus sums, over the values in the order given. */
function kahan(values: number[]): number {
  let sum = 0;
  let c = 0;
  for (const v of values) {
    const t = sum + v;
    c += Math.abs(sum) >= Math.abs(v) ? sum - t + v : v - t + sum;
    sum = t;
  }
  return sum + c;
}

describe("range evaluation over columns, against a step-by-step oracle on random series", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const { list, points, fromMs, toMs } = randomSeries(seed);
    const r = prng(seed * 7919);
    const stepMs = [5_000, 15_000, 60_000, 37_000][seed % 4] as number;
    const offsetMs = [0, 30_000, -20_000][seed % 3] as number;
    const range = { startMs: fromMs + 120_000, endMs: toMs - Math.floor(r() * 600) * 1000, stepMs };
    const ts = steps(range.startMs, range.endMs, stepMs);
    const offset = offsetMs === 0 ? "" : ` offset ${offsetMs / 1000}s`;
    const kindFilter = seed % 2 === 0 ? ', pane_kind="final"' : "";
    const keeps = (p: Point) => kindFilter === "" || p.kind === "final";

    it(`seed ${seed}: an instant selector takes the newest sample in the lookback at every step`, () => {
      const rows = ts.flatMap((t) =>
        list.flatMap((s, n) => {
          if (s.labels["__name__"] !== "tidemark_error_ratio") return [];
          const at = t - offsetMs;
          const reach = Math.max(LOOKBACK_MS, s.stepMs ?? 0);
          // Prometheus 2.42: the lookback is closed at both ends, [t − lookback, t].
          const p = (points[n] as Point[]).filter((q) => keeps(q) && q.ms <= at && q.ms >= at - reach).at(-1);
          return p ? [{ labels: { ...s.labels, pane_kind: p.kind }, ts: t, value: p.value }] : [];
        }),
      );
      const q = `tidemark_error_ratio{policy="p"${kindFilter}}${offset}`;
      const got = evaluateRange(parsePromql(q), testSource(list), range);
      expect(got).toEqual(grouped(rows));
      // The same selector through the per-step path (an aggregation that keeps every label).
      const perStep = `max by (__name__, policy, window, service, pane_kind) (${q})`;
      expect(evaluateRange(parsePromql(perStep), testSource(list), range)).toEqual(grouped(rows));
    });

    for (const [fn, rangeS] of [
      ["increase", 300],
      ["rate", 120],
      ["avg_over_time", 300],
      ["max_over_time", 90],
      ["min_over_time", 600],
    ] as const) {
      const metric = fn === "rate" || fn === "increase" ? "tidemark_requests" : "tidemark_error_ratio";
      it(`seed ${seed}: ${fn}(${metric}[${rangeS}s]) at every step equals the oracle's`, () => {
        const rows = ts.flatMap((t) =>
          list.flatMap((s, n) => {
            if (s.labels["__name__"] !== metric) return [];
            const at = t - offsetMs;
            if ((fn === "rate" || fn === "increase") && rangeS * 1000 < (s.stepMs ?? 0)) return [];
            // rate and increase add up the windows ending in (t − d, t]; *_over_time read [t − d, t] as Prometheus 2.42.
            const counts = fn === "rate" || fn === "increase";
            const from = at - rangeS * 1000;
            const vs = (points[n] as Point[])
              .filter((q) => keeps(q) && q.ms <= at && (counts ? q.ms > from : q.ms >= from))
              .map((q) => q.value);
            if (vs.length === 0) return [];
            const value =
              fn === "increase"
                ? kahan(vs)
                : fn === "rate"
                  ? kahan(vs) / rangeS
                  : fn === "avg_over_time"
                    ? kahan(vs) / vs.length
                    : fn === "max_over_time"
                      ? Math.max(...vs)
                      : Math.min(...vs);
            return [{ labels: withoutName(s.labels), ts: t, value }];
          }),
        );
        const q = `${fn}(${metric}{policy="p"${kindFilter}}[${rangeS}s]${offset})`;
        const got = evaluateRange(parsePromql(q), testSource(list), range);
        const want = grouped(rows);
        expect(got.map((s) => [s.labels, s.times])).toEqual(want.map((s) => [s.labels, s.times]));
        got.forEach((s, k) =>
          s.values.forEach((v, i) => {
            const w = (want[k] as RangeSeries).values[i] as number;
            // Integer counts are summed exactly; fractional values as Kahan sums in another order.
            if (Number.isInteger(w)) expect(v).toBe(w);
            else expect(Math.abs(v - w)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(w)));
          }),
        );
      });
    }

    it(`seed ${seed}: touches exactly the samples the steps used`, () => {
      const rangeMs = 300_000;
      const source = testSource(list);
      evaluateRange(
        parsePromql(`sum(increase(tidemark_requests{policy="p"${kindFilter}}[5m]${offset}))`),
        source,
        range,
      );
      list.forEach((s, n) => {
        const want = new Set<number>();
        if (s.labels["__name__"] === "tidemark_requests")
          for (const t of ts)
            (points[n] as Point[]).forEach((q, i) => {
              const at = t - offsetMs;
              if (keeps(q) && q.ms <= at && q.ms > at - rangeMs) want.add(i);
            });
        expect([...(source.touched[n] as Set<number>)].sort((a, b) => a - b)).toEqual([...want].sort((a, b) => a - b));
      });
    });
  }

  it("sums counts past 2^53 with Kahan, not with prefix sums that would round", () => {
    const big = 2 ** 52;
    const list: TestSeries[] = [
      {
        labels: { __name__: "tidemark_requests", service: "a" },
        points: [
          [10, big],
          [20, big],
          [30, 1],
          [40, 1],
        ],
      },
    ];
    const got = evaluateRange(parsePromql("increase(tidemark_requests[20s])"), testSource(list), {
      startMs: 40_000,
      endMs: 40_000,
      stepMs: 1000,
    });
    expect(got[0]?.values).toEqual([2]); // prefix sums would give 2^53 − 2^53 = 0
    const all = evaluateRange(parsePromql("increase(tidemark_requests[40s])"), testSource(list), {
      startMs: 40_000,
      endMs: 40_000,
      stepMs: 1000,
    });
    expect(all[0]?.values).toEqual([kahan([1, 1, big, big])]);
  });
});
