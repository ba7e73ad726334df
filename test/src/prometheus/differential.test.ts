/**
 * tidemark's PromQL against a real Prometheus 2.42 over the same samples (differential-rig.ts):
 * every corpus query (promql-corpus.ts) at instants on and off the sample grid and as range queries
 * with steps on and off it answers the same (docs/decisions/0036-promql-as-prometheus.md). rate,
 * increase and irate — tidemark's one deliberate deviation — are held to values computed here by
 * brute force from the samples.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ask, difference, key, nonEmpty, pool, type Answer, type Ask, type Labels } from "./differential-compare.js";
import { startDifferentialRig, type DifferentialRig, type ExportedSeries } from "./differential-rig.js";
import { CORPUS, DEVIATION, deviationQuery, isOrdered } from "./promql-corpus.js";

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/** Two instants and two ranges: on the 10 s sample grid, and off it. */
function evaluations(rig: DifferentialRig): Array<{ name: string; ask: (q: string) => Ask }> {
  const on = Math.floor((rig.lastMs - 90_000) / 10_000) * 10_000;
  const off = rig.firstMs + 270_000 + 3_456;
  const start = rig.firstMs + 120_000;
  return [
    { name: "instant on the grid", ask: (query) => ({ path: "/api/v1/query", params: { query, time: seconds(on) } }) },
    {
      name: "instant off the grid",
      ask: (query) => ({ path: "/api/v1/query", params: { query, time: seconds(off) } }),
    },
    {
      name: "range, step 10s on the grid",
      ask: (query) => ({
        path: "/api/v1/query_range",
        params: { query, start: seconds(start), end: seconds(rig.lastMs), step: "10" },
      }),
    },
    {
      name: "range, step 7s off the grid",
      ask: (query) => ({
        path: "/api/v1/query_range",
        params: { query, start: seconds(start + 1_234), end: seconds(rig.lastMs - 3_000), step: "7" },
      }),
    },
  ];
}

describe("PromQL: tidemark against Prometheus 2.42 over tidemark's own samples", () => {
  let rig: DifferentialRig;
  beforeAll(async () => {
    rig = await startDifferentialRig();
    expect(rig.series.length).toBeGreaterThan(50);
  }, 120_000);
  afterAll(() => rig?.stop());

  it(`answers each of ${CORPUS.length} queries as Prometheus does, at instants and over ranges`, async () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    const evals = evaluations(rig);
    const jobs = CORPUS.flatMap((query) =>
      evals.map((ev) => async () => {
        const q = ev.ask(query);
        const [t, p] = await Promise.all([ask(rig.tidemark, q, true), ask(rig.prometheus, q, false)]);
        return { query, ev: ev.name, t, p, diff: difference(t, p, isOrdered(query)) };
      }),
    );
    const results = await pool(jobs, 4);
    const diffs = results.filter((r) => r.diff !== undefined).map((r) => `${r.query} [${r.ev}]: ${r.diff}`);
    expect(diffs).toEqual([]);
    // Not vacuous: almost every query has values in Prometheus's answer somewhere.
    const answered = new Set(results.filter((r) => nonEmpty(r.p)).map((r) => r.query));
    // Prometheus's errors, which tidemark gives too: label sets made equal (by dropping __name__ or
    // rewriting a label), many-to-many matches, and range vectors and strings asked as range queries.
    const errors = new Set(results.filter((r) => r.p.kind === "error").map((r) => r.query));
    expect([...errors].sort()).toEqual(
      [
        'abs({__name__=~"tidemark_(requests|errors)", route=""})',
        'label_join(tidemark_requests{route=""}, "service", "", "nothing")',
        'label_replace(tidemark_requests{route=""}, "service", "", "service", "a.*")',
        'tidemark_errors{route=""} / ignoring(policy) tidemark_requests{route="", policy="exact"}',
        'tidemark_requests{route=""} + on(policy) tidemark_errors{route=""}',
        'tidemark_requests{route=""} + tidemark_errors{route="", policy="exact"} * on(policy, window) group_left tidemark_errors{route=""}',
        'sum(tidemark_requests{route=""})[2m:30s]',
        'tidemark_error_ratio{route=""}[2m] offset 1m',
        'tidemark_latency_ms{route="", quantile="0.99"}[90s]',
        '"a string"',
      ].sort(),
    );
    expect(answered.size).toBeGreaterThanOrEqual(CORPUS.length - errors.size - 6);
  }, 120_000);

  it("rate, increase and irate add up the windows' counts in (t − d, t], not Prometheus's extrapolation", async () => {
    let differsFromPrometheus = 0;
    for (const ev of evaluations(rig))
      for (const d of DEVIATION) {
        const query = deviationQuery(d);
        const q = ev.ask(query);
        const [got, prom] = await Promise.all([ask(rig.tidemark, q, true), ask(rig.prometheus, q, false)]);
        const want = expected(rig.series, d, q);
        expect(difference(got, want, false), `${query} [${ev.name}]`).toBeUndefined();
        if (difference(got, prom, false) !== undefined) differsFromPrometheus++;
      }
    expect(differsFromPrometheus).toBeGreaterThan(0);
  });

  it("histogram_quantile over tidemark's quantile series is a 422 that says what to read", async () => {
    const q = {
      path: "/api/v1/query" as const,
      params: { query: 'histogram_quantile(0.9, tidemark_latency_ms{route=""})' },
    };
    const got = await ask(rig.tidemark, q, true);
    expect(got.kind === "error" && [got.status, got.message]).toEqual([
      422,
      expect.stringContaining('tidemark ships quantiles, not buckets — read tidemark_latency_ms{quantile="0.99"}'),
    ]);
  });
});

/** The brute-force answer of a deviation query from the exported samples. */
function expected(series: readonly ExportedSeries[], d: (typeof DEVIATION)[number], q: Ask): Answer {
  const rangeMs = parseDuration(d.range);
  const offsetMs = d.offset ? parseDuration(d.offset.replace(" offset ", "")) : 0;
  const steps =
    q.path === "/api/v1/query"
      ? [Math.round(Number(q.params["time"]) * 1000)]
      : stepsOf(Number(q.params["start"]), Number(q.params["end"]), Number(q.params["step"]));
  const out = new Map<string, { labels: Labels; points: Array<[number, string]> }>();
  for (const s of series) {
    if (s.labels["__name__"] !== d.metric || (s.labels["route"] ?? "") !== "") continue;
    const labels = Object.fromEntries(Object.entries(s.labels).filter(([n]) => n !== "__name__"));
    const windowS = Number((s.labels["window"] as string).replace("s", ""));
    for (const t of steps) {
      const ref = t - offsetMs;
      const inRange = s.points.filter(([ts]) => ts > ref - rangeMs && ts <= ref).map(([, v]) => v);
      if (inRange.length === 0) continue;
      const sum = inRange.reduce((a, b) => a + b, 0);
      const value =
        d.fn === "increase" ? sum : d.fn === "rate" ? sum / (rangeMs / 1000) : (inRange.at(-1) as number) / windowS;
      const entry = out.get(key(labels)) ?? { labels, points: [] };
      entry.points.push([t / 1000, String(value)]);
      out.set(key(labels), entry);
    }
  }
  if (q.path === "/api/v1/query")
    return {
      kind: "vector",
      samples: [...out.values()].map((s) => ({ labels: s.labels, value: (s.points[0] as [number, string])[1] })),
    };
  return { kind: "matrix", series: [...out.values()] };
}

function stepsOf(startS: number, endS: number, stepS: number): number[] {
  const out: number[] = [];
  for (let t = Math.round(startS * 1000); t <= Math.round(endS * 1000); t += stepS * 1000) out.push(t);
  return out;
}

function parseDuration(text: string): number {
  const m = /^(-?\d+)(s|m)$/.exec(text.trim());
  if (!m) throw new Error(`duration ${text}`);
  return Number(m[1]) * (m[2] === "m" ? 60_000 : 1000);
}
