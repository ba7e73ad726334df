/**
 * The Prometheus API's query limits through fastify (docs/prometheus-api.md, "Query limits"): each
 * answered with Prometheus's status and error type, a message naming the setting, and a count in
 * the metrics. The live, event-loop side is test/src/security/query-limits.test.ts.
 */
import { describe, expect, it } from "vitest";
import Fastify from "fastify";
import { resolveConfig, type DashboardConfigInput } from "../config.js";
import { dashboardMetrics } from "../metrics.js";
import { testPane } from "../../protocol/pane.fixture.js";
import { compareLabels, matcher } from "../promql/index.js";
import { PaneSamples } from "./pane-samples.js";
import { promApi } from "./prom-api.js";

const W = 10_000;
const T = 1_700_000_000_000;
const SERVICES = 20;
const WINDOWS = 50;

async function api(config: DashboardConfigInput) {
  const samples = new PaneSamples({ windowsPerSeries: 100, maxWindows: 100_000, discardingPolicies: [] });
  for (let s = 0; s < SERVICES; s++)
    for (let k = 0; k < WINDOWS; k++)
      samples.apply(testPane({ start: T + k * W, count: 10 + k, service: `s${s}`, kind: "final" }));
  const metrics = dashboardMetrics();
  const app = Fastify();
  await app.register(promApi(resolveConfig(config), samples, { now: () => T + WINDOWS * W, metrics }));
  await app.ready();
  const limited = async (limit: string): Promise<number> => {
    const text = await metrics.registry.metrics();
    const m = new RegExp(`^tidemark_dashboard_prom_queries_limited_total\\{limit="${limit}"\\} (\\d+)$`, "m").exec(
      text,
    );
    return Number(m?.[1] ?? 0);
  };
  const range = (query: string, step = "10s", extra = "") =>
    app.inject({
      url: `/api/v1/query_range?query=${encodeURIComponent(query)}&start=${T / 1000}&end=${(T + WINDOWS * W) / 1000}&step=${step}${extra}`,
    });
  return { app, limited, range };
}

describe("Prometheus API query limits", () => {
  it("refuses a query selecting more series than queryMaxSeries, naming the setting", async () => {
    const { app, limited, range } = await api({ queryMaxSeries: SERVICES - 1 });
    const res = await range('tidemark_requests{policy="dashboard"}');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ status: "error", errorType: "execution", code: "TM_PROM_LIMIT" });
    expect(res.json().error).toContain(`more than ${SERVICES - 1}`);
    expect(res.json().error).toContain("limit queryMaxSeries = 19; raise it with --query-max-series");
    expect(await limited("series")).toBe(1);
    expect((await range('tidemark_requests{service="s1"}')).statusCode).toBe(200);
    await app.close();
  });

  it("bounds /api/v1/series, labels and label values by queryMaxSeries as queries are", async () => {
    const { app, limited } = await api({ queryMaxSeries: SERVICES - 1 });
    const all = encodeURIComponent('tidemark_requests{policy="dashboard"}');
    for (const url of [
      `/api/v1/series?match[]=${all}`,
      `/api/v1/labels?match[]=${all}`,
      `/api/v1/label/service/values?match[]=${all}`,
    ]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(422);
      expect(res.json(), url).toMatchObject({ status: "error", errorType: "execution", code: "TM_PROM_LIMIT" });
      expect(res.json().error, url).toContain("limit queryMaxSeries = 19; raise it with --query-max-series");
    }
    expect(await limited("series")).toBe(3);
    const one = encodeURIComponent('tidemark_requests{policy="dashboard",service="s1"}');
    const res = await app.inject({ url: `/api/v1/label/service/values?match[]=${one}` });
    expect([res.statusCode, res.json().data]).toEqual([200, ["s1"]]);
    await app.close();
  });

  it("refuses a query holding more samples than queryMaxSamples", async () => {
    const { app, limited, range } = await api({ queryMaxSamples: 1000 });
    const res = await range("sum(tidemark_requests)", "1s");
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toContain("too many samples");
    expect(res.json().error).toContain("--query-max-samples, TIDEMARK_DASHBOARD_QUERY_MAX_SAMPLES");
    expect(await limited("samples")).toBe(1);
    await app.close();
  });

  it("refuses a response larger than queryMaxResponseBytes, and serves the same query under a larger one", async () => {
    const small = await api({ queryMaxResponseBytes: 64 * 1024 });
    const res = await small.range('tidemark_requests{policy="dashboard"}', "1s");
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toContain("larger than 65536 bytes");
    expect(await small.limited("response_bytes")).toBe(1);
    await small.app.close();
    const large = await api({});
    const ok = await large.range('tidemark_requests{policy="dashboard"}', "1s");
    expect(ok.statusCode).toBe(200);
    expect(ok.rawPayload.length).toBeGreaterThan(64 * 1024);
    await large.app.close();
  });

  it("answers 503 timeout past the request's timeout (at most queryTimeoutMs), as Prometheus does", async () => {
    const { app, limited, range } = await api({});
    // 10,001 steps of a sum over 20 series take far longer than 1 ms; the deadline is checked after each.
    const res = await range("sum(tidemark_requests)", "0.05", "&timeout=0.001");
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ errorType: "timeout", code: "TM_PROM_TIMEOUT" });
    expect(res.json().error).toContain("query timed out in expression evaluation");
    expect(await limited("timeout")).toBe(1);
    await app.close();
  });

  it("queues up to queryMaxQueued behind queryMaxConcurrency and refuses the next with 503 unavailable", async () => {
    const { app, limited, range } = await api({ queryMaxConcurrency: 1, queryMaxQueued: 1 });
    const slow = () => range("sum(tidemark_requests)", "0.05");
    const answers = await Promise.all([slow(), slow(), slow()]);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 503]);
    expect(answers[2]?.json()).toMatchObject({ errorType: "unavailable", code: "TM_PROM_BUSY" });
    expect(answers[2]?.json().error).toContain("1 running and 1 waiting");
    expect(await limited("queue")).toBe(1);
    await app.close();
  });

  it("scans /api/v1/series, labels and label values in turns: past the deadline they answer 503 timeout, and other requests are answered meanwhile", async () => {
    // Many series, each a pair per metric of its level: a scan of every one takes many turns.
    const samples = new PaneSamples({ windowsPerSeries: 1, maxWindows: 1_000_000, discardingPolicies: [] });
    for (let s = 0; s < 5_000; s++) samples.apply(testPane({ start: T, service: `svc-${s}`, kind: "final" }));
    const metrics = dashboardMetrics();
    const app = Fastify();
    // The queries' clock: every read advances 1 ms (a turn every SLICE_MS of reads, far from the
    // deadline), and the test moves it past the deadline once it has seen what it waits for.
    let ticks = 0;
    let jumped = 0;
    const clock = (): number => ++ticks + jumped;
    const config = resolveConfig({ queryTimeoutMs: "10s", queryMaxSeries: 1_000_000_000 });
    await app.register(promApi(config, samples, { now: () => T + W, metrics, clock }));
    await app.ready();
    const running = async (): Promise<number> => (await metrics.promQueriesRunning.get()).values[0]?.value ?? 0;
    const all = encodeURIComponent('{__name__=~".+"}');
    for (const url of [
      `/api/v1/series?match[]=${all}`,
      `/api/v1/labels?match[]=${all}`,
      `/api/v1/label/service/values?match[]=${all}`,
    ]) {
      let settled = false;
      const scan = app.inject({ url }).finally(() => (settled = true));
      // Seen running from another turn of the event loop: the scan is not one synchronous pass.
      while ((await running()) === 0 && !settled) await new Promise((r) => setImmediate(r));
      expect(settled, `${url} was never seen running`).toBe(false);
      const other = await app.inject({ url: "/api/v1/status/buildinfo" });
      expect(other.statusCode).toBe(200);
      expect(settled, `${url} answered before a request sent while it ran`).toBe(false);
      jumped += 3_600_000;
      const res = await scan;
      expect(res.statusCode, url).toBe(503);
      expect(res.json(), url).toMatchObject({ errorType: "timeout", code: "TM_PROM_TIMEOUT" });
    }
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^tidemark_dashboard_prom_queries_limited_total\{limit="timeout"\} 3$/m);
    await app.close();
    // Given the time, the scan in turns answers what one synchronous pass gives: one service's series.
    const patient = Fastify();
    await patient.register(promApi(resolveConfig({}), samples, { now: () => T + W }));
    const one = encodeURIComponent('{service="svc-7"}');
    const ok = await patient.inject({ url: `/api/v1/series?match[]=${one}` });
    expect(ok.statusCode).toBe(200);
    const names = (ok.json().data as Array<Record<string, string>>).map((l) => l["__name__"]);
    expect(names.length).toBeGreaterThan(1);
    const pass = samples.seriesIn([matcher("service", "=", "svc-7")], -Infinity, Infinity);
    expect(ok.json().data).toEqual([...pass].sort(compareLabels));
    await patient.close();
  });
});
