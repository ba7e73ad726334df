/**
 * Grafana's Prometheus data source against tidemark (docs/prometheus-api.md,
 * docs/decisions/0037-prometheus-data-model.md): the `1+1` health check, buildinfo, exemplars,
 * template variables through label values with `match[]`, and every query of the provisioned
 * dashboard (deploy/grafana) replayed as Grafana sends it, its values compared with the engine's
 * panes read from TM_PANES by brute force (pane-oracle.ts); real nats-server, engine, merge
 * operator and dashboard fed by backfill.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { grafanaRequest, interpolate, readDashboard, type VarValue } from "./grafana-replay.js";
import { agrees, ORACLES, type Oracle, type Vars } from "./dashboard-oracles.js";
import { labelKey, levelOf, PaneOracle } from "./pane-oracle.js";
import { panesOf, promApi, startPromRig, type PromRig } from "./prom-rig.js";

const W = 10_000;
const SERVICE = "api";

describe("Grafana as a client", () => {
  let rig: PromRig;
  let newest: Pane;
  let oracle: PaneOracle;
  beforeAll(async () => {
    rig = await startPromRig();
    const held = (await panesOf(rig.url, "dashboard", W, SERVICE)).filter((p) => p.kind !== "retract");
    newest = held[held.length - 1] as Pane;
    oracle = new PaneOracle(rig.panes);
  }, 240_000);
  afterAll(() => rig?.stop());

  it("passes the data source test: POST query=1+1 is the scalar 2, buildinfo says Prometheus 2.42.0 built as tidemark", async () => {
    const health = await promApi(rig.url, "/api/v1/query", { query: "1+1", time: String(Date.now() / 1000) }, "POST");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: "success",
      data: { resultType: "scalar", result: [expect.any(Number), "2"] },
    });
    const build = await promApi(rig.url, "/api/v1/status/buildinfo", {});
    expect(build.status).toBe(200);
    expect(build.body).toMatchObject({ status: "success", data: { version: "2.42.0", branch: "tidemark" } });
    expect(Object.keys(build.body.data as object).sort()).toEqual(
      ["branch", "buildDate", "buildUser", "goVersion", "revision", "version"].sort(),
    );
    const noToken = await fetch(`${rig.url}/api/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "query=1%2B1",
    });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ status: "error", errorType: "unauthorized" });
  });

  it("answers query_exemplars with an empty success", async () => {
    const end = newest.window.end / 1000;
    const ex = await promApi(
      rig.url,
      "/api/v1/query_exemplars",
      { query: 'tidemark_requests{policy="dashboard"}', start: String(end - 600), end: String(end) },
      "POST",
    );
    expect(ex).toEqual({ status: 200, body: { status: "success", data: [] } });
  });

  it("fills template variables: label_values(tidemark_requests, service) through label values with match[]", async () => {
    const range = { start: String(newest.window.end / 1000 - 3600), end: String(newest.window.end / 1000 + 60) };
    const serviceLevel = rig.panes.filter((p) => levelOf(p) === "service" && p.key.user === undefined);
    const distinct = (xs: string[]) => [...new Set(xs)].sort();
    const services = await promApi(rig.url, "/api/v1/label/service/values", {
      ...range,
      "match[]": "tidemark_requests",
    });
    expect(services.body).toEqual({ status: "success", data: distinct(serviceLevel.map((p) => p.key.service)) });
    expect(services.body.data).not.toContain("*");
    // The provisioned variables, as Grafana turns label_values(<selector>, <label>) into requests.
    const dash = readDashboard();
    const values: Record<string, VarValue> = { policy: "billing", window: "60s" };
    const want: Record<string, string[]> = {
      policy: distinct(serviceLevel.map((p) => p.policy)),
      window: distinct(
        serviceLevel.filter((p) => p.policy === "billing").map((p) => `${(p.window.end - p.window.start) / 1000}s`),
      ),
      service: distinct(
        serviceLevel
          .filter((p) => p.policy === "billing" && p.window.end - p.window.start === 60_000)
          .map((p) => p.key.service),
      ),
    };
    for (const v of dash.templating.list) {
      const m = /^label_values\((?:(.+),\s*)?(\w+)\)$/.exec(v.query.query);
      expect(m, v.query.query).not.toBeNull();
      const [, selector, label] = m as RegExpExecArray;
      const params = { ...range, ...(selector ? { "match[]": interpolate(selector, dash, values, {}) } : {}) };
      const got = await promApi(rig.url, `/api/v1/label/${label}/values`, params, "GET");
      expect(got.body.data, v.name).toEqual(want[v.name]);
    }
    const none = await promApi(rig.url, "/api/v1/label/service/values", { start: "1", end: "2" });
    expect(none.body.data).toEqual([]);
    const labels = async (match: string) =>
      (await promApi(rig.url, "/api/v1/labels", { "match[]": match, ...range }, "POST")).body.data;
    expect(await labels("tidemark_latency_ms")).toEqual([
      "__name__",
      "pane_kind",
      "policy",
      "quantile",
      "service",
      "window",
    ]);
    expect(await labels("tidemark_route_latency_ms")).toEqual([
      "__name__",
      "pane_kind",
      "policy",
      "quantile",
      "route",
      "service",
      "window",
    ]);
    expect(await labels("tidemark_all_users")).toEqual(["__name__", "pane_kind", "policy", "window"]);
    const meta = await promApi(rig.url, "/api/v1/metadata", {});
    expect(Object.keys(meta.body.data as object)).toEqual(
      expect.arrayContaining(["tidemark_bias_error_ratio_pp", "tidemark_route_requests", "tidemark_all_users"]),
    );
  });

  it("answers a panel's range query with the panes' values and states the measured bias as a warning", async () => {
    const end = newest.window.end / 1000;
    const res = await promApi(
      rig.url,
      "/api/v1/query_range",
      {
        query: `tidemark_error_ratio{policy="dashboard", window="10s", service="${SERVICE}"}`,
        start: String(end - 300),
        end: String(end),
        step: "10",
      },
      "POST",
    );
    expect(res.status).toBe(200);
    const data = res.body.data as { resultType: string; result: Array<{ values: Array<[number, string]> }> };
    expect(data.resultType).toBe("matrix");
    const last = data.result.flatMap((s) => s.values).find(([t]) => t === end);
    expect(Number(last?.[1])).toBe(newest.value.errorRate);
    const pp = newest.bias.errorRatePp;
    expect(pp, "the recording is long enough for a measured bias").not.toBeNull();
    const figure = Math.abs(pp as number).toFixed(1);
    const direction = (pp as number) < 0 ? "under" : "over";
    if (Math.abs(pp as number) >= 0.05)
      expect(res.body.warnings).toContain(
        `dashboard policy: error ratio ${direction}-reported by ≈ ${figure} pp for ${SERVICE} (measured against the reference over ${newest.bias.windows} closed windows)`,
      );
    const bias = await promApi(rig.url, "/api/v1/query", {
      query: `tidemark_bias_error_ratio_pp{policy="dashboard", window="10s", service="${SERVICE}"}`,
      time: String(end),
    });
    expect((bias.body.data as { result: Array<{ value: [number, string] }> }).result[0]?.value[1]).toBe(String(pp));
  });

  it("replays every query of deploy/grafana's dashboard as Grafana sends it; its values are the panes'", async () => {
    const dash = readDashboard();
    const targets = dash.panels.flatMap((p) => p.targets.map((t) => ({ key: `${p.title}#${t.refId}`, expr: t.expr })));
    expect(targets.map((t) => t.key).sort()).toEqual(Object.keys(ORACLES).sort());
    const toMs = newest.window.end;
    const points = new Map<string, number>();
    for (const policy of ["dashboard", "alerting", "billing"])
      for (const window of ["10s", "60s"])
        for (const service of [{ all: true } as const, ["api", "web"]])
          for (const [spanMs, width] of [
            [600_000, 1000],
            [3_600_000, 250],
          ] as const) {
            const req = grafanaRequest(toMs - spanMs, toMs, width);
            const vars: Vars = {
              policy,
              windowMs: Number.parseInt(window, 10) * 1000,
              service: "all" in service ? ".*" : `(${service.join("|")})`,
              rateIntervalMs: req.rateIntervalMs,
            };
            for (const { key, expr } of targets) {
              const query = interpolate(expr, dash, { policy, window, service }, req.builtins);
              const what = `${key} ${JSON.stringify({ policy, window, service, step: req.step })}: ${query}`;
              const res = await promApi(
                rig.url,
                "/api/v1/query_range",
                { query, start: String(req.start), end: String(req.end), step: String(req.step) },
                "POST",
              );
              expect(res.status, `${what} ${JSON.stringify(res.body)}`).toBe(200);
              const got = new Map<string, number>();
              for (const s of (
                res.body.data as { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> }
              ).result)
                for (const [t, v] of s.values) got.set(`${labelKey(s.metric)}@${t}`, Number(v));
              const want = new Map<string, number>();
              for (let t = req.start; t <= req.end; t += req.step)
                for (const [labels, v] of (ORACLES[key] as Oracle)(oracle, vars, t * 1000))
                  want.set(`${labels}@${t}`, v);
              expect([...got.keys()].sort(), what).toEqual([...want.keys()].sort());
              const off = [...want].filter(([k, v]) => !agrees(got.get(k) as number, v));
              expect(
                off.slice(0, 3).map(([k, v]) => [k, got.get(k), v]),
                what,
              ).toEqual([]);
              points.set(key, (points.get(key) ?? 0) + want.size);
            }
          }
    // Every target, the bias panels included, was compared on values somewhere.
    for (const { key } of targets) expect(points.get(key) ?? 0, key).toBeGreaterThan(20);
  }, 120_000);

  it("answers bad and unsupported expressions with 400 / 422 and a message", async () => {
    const bad = await promApi(rig.url, "/api/v1/query", { query: "sum(tidemark_requests" }, "POST");
    expect(bad).toEqual({
      status: 400,
      body: {
        status: "error",
        errorType: "bad_data",
        error: "parse error at char 22: unexpected end of input",
        code: "TM_PROMQL_PARSE",
      },
    });
    const sub = await promApi(rig.url, "/api/v1/query", { query: "max_over_time(tidemark_requests[5m:1m])" });
    expect([sub.status, sub.body.status]).toEqual([200, "success"]);
    const rateSub = await promApi(rig.url, "/api/v1/query", { query: "rate(tidemark_requests[5m:1m])" });
    expect([rateSub.status, rateSub.body.errorType]).toEqual([422, "execution"]);
    expect(rateSub.body.error).toBe(
      "rate() over a subquery: tidemark's rate adds up per-window counts of a count metric " +
        '(docs/prometheus-api.md, "rate, increase and irate"); use sum_over_time over the subquery instead ' +
        "(tidemark answers Prometheus 2.42's PromQL over floats: see docs/prometheus-api.md)",
    );
    const gauge = await promApi(rig.url, "/api/v1/query", { query: "rate(tidemark_error_ratio[5m])" });
    expect([gauge.status, gauge.body.errorType]).toEqual([422, "execution"]);
    const step = await promApi(rig.url, "/api/v1/query_range", { query: "1", start: "0", end: "10", step: "soon" });
    expect([step.status, step.body.error]).toEqual([
      400,
      'invalid parameter "step": cannot parse "soon" to a valid duration: give seconds (15) or a duration (15s, 1m)',
    ]);
  });
});
