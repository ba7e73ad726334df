/**
 * Requests shaped as Grafana's Prometheus data source sends them (form POSTs, the `1+1` health
 * check, buildinfo, label values with match[] for template variables, range queries with a numeric
 * step), answered by the real dashboard fed by the real engine (docs/prometheus-api.md).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { panesOf, promApi, startPromRig, type PromRig } from "./prom-rig.js";

const W = 10_000;
const SERVICE = "api";

describe("Grafana-shaped requests", () => {
  let rig: PromRig;
  let newest: Pane;
  beforeAll(async () => {
    rig = await startPromRig();
    const held = (await panesOf(rig.url, "dashboard", W, SERVICE)).filter((p) => p.kind !== "retract");
    newest = held[held.length - 1] as Pane;
  }, 240_000);
  afterAll(() => rig?.stop());

  it("passes the data source health check (POST form query=1+1) and gets a JSON 404 for buildinfo", async () => {
    const health = await promApi(rig.url, "/api/v1/query", { query: "1+1", time: String(Date.now() / 1000) }, "POST");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: "success",
      data: { resultType: "scalar", result: [expect.any(Number), "2"] },
    });
    const build = await promApi(rig.url, "/api/v1/status/buildinfo", {});
    expect(build.status).toBe(404);
    expect(build.body).toMatchObject({ status: "error", errorType: "not_found" });
    const noToken = await fetch(`${rig.url}/api/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "query=1%2B1",
    });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ status: "error", errorType: "unauthorized" });
  });

  it("answers label_values(policy) and label values with match[] and a time range", async () => {
    const range = { start: String(newest.window.start / 1000 - 3600), end: String(newest.window.end / 1000 + 60) };
    const policies = await promApi(rig.url, "/api/v1/label/policy/values", range);
    expect(policies.body).toEqual({ status: "success", data: ["alerting", "billing", "dashboard"] });
    const services = await promApi(rig.url, "/api/v1/label/service/values", {
      ...range,
      "match[]": 'tidemark_requests{policy="dashboard", route=""}',
    });
    expect(services.body.data).toEqual([...new Set(rig.panes.map((p) => p.key.service))].sort());
    const none = await promApi(rig.url, "/api/v1/label/service/values", { start: "1", end: "2" });
    expect(none.body.data).toEqual([]);
    const labels = await promApi(rig.url, "/api/v1/labels", { "match[]": "tidemark_latency_ms", ...range }, "POST");
    expect(labels.body.data).toEqual(["__name__", "pane_kind", "policy", "quantile", "route", "service", "window"]);
    const meta = await promApi(rig.url, "/api/v1/metadata", {});
    expect(Object.keys(meta.body.data as object)).toContain("tidemark_bias_error_ratio_pp");
  });

  it("answers a panel's range query with the panes' values and states the measured bias as a warning", async () => {
    const end = newest.window.end / 1000;
    const res = await promApi(
      rig.url,
      "/api/v1/query_range",
      {
        query: `tidemark_error_ratio{policy="dashboard", window="10s", service="${SERVICE}", route=""}`,
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
      query: `tidemark_bias_error_ratio_pp{policy="dashboard", window="10s", service="${SERVICE}", route=""}`,
      time: String(end),
    });
    expect((bias.body.data as { result: Array<{ value: [number, string] }> }).result[0]?.value[1]).toBe(String(pp));
  });

  it("answers every panel of deploy/grafana's overview dashboard, its variables filled in", async () => {
    const file = new URL("../../../deploy/grafana/dashboards/tidemark-overview.json", import.meta.url);
    const dash = JSON.parse(readFileSync(file, "utf8")) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const end = newest.window.end / 1000;
    for (const panel of dash.panels) {
      for (const { expr } of panel.targets) {
        const query = expr.replaceAll("$policy", "dashboard").replaceAll("$window", "10s").replaceAll("$service", ".*");
        const res = await promApi(
          rig.url,
          "/api/v1/query_range",
          { query, start: String(end - 600), end: String(end), step: "15" },
          "POST",
        );
        expect(res.status, `${panel.title}: ${JSON.stringify(res.body)}`).toBe(200);
        const result = (res.body.data as { result: unknown[] }).result;
        if (!panel.title.includes("bias")) expect(result.length, panel.title).toBeGreaterThan(0);
      }
    }
  });

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
    expect(sub.status).toBe(422);
    expect(sub.body.error).toBe(
      "subqueries are not supported (tidemark answers a PromQL subset: see docs/prometheus-api.md)",
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
