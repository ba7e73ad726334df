import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Fastify, { type FastifyInstance } from "fastify";
import { resolveConfig } from "../config.js";
import { testPane } from "../../protocol/pane.fixture.js";
import { PaneSamples } from "./pane-samples.js";
import { promApi } from "./prom-api.js";

const W = 10_000;
const T = 1_700_000_000_000;
const NOW = T + 10 * W;

describe("Prometheus HTTP API (fastify inject)", () => {
  let app: FastifyInstance;
  const form = { "content-type": "application/x-www-form-urlencoded", authorization: "Bearer s3cret" };
  const auth = { authorization: "Bearer s3cret" };

  beforeAll(async () => {
    const samples = new PaneSamples({ windowsPerSeries: 100, maxWindows: 1000, discardingPolicies: [] });
    for (let k = 0; k < 5; k++) {
      samples.apply(testPane({ start: T + k * W, count: 10 + k, errors: k, kind: "final" }));
      samples.apply(testPane({ start: T + k * W, count: 1, service: "web", policy: "billing", kind: "final" }));
    }
    samples.apply(
      testPane({
        start: T + 5 * W,
        count: 20,
        errors: 5,
        kind: "on-time",
        bias: { countPct: 1, errorRatePp: -1.44, p99Pct: null, usersPct: null, windows: 12 },
      }),
    );
    app = Fastify();
    await app.register(promApi(resolveConfig({ readToken: "s3cret" }), samples, { now: () => NOW }));
    await app.ready();
  });
  afterAll(() => app.close());

  it("answers Grafana's health check 1+1 as a scalar at the request time", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/api/v1/query",
      headers: form,
      payload: "query=1%2B1&time=1700000100",
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "success", data: { resultType: "scalar", result: [1700000100, "2"] } });
    const now = await app.inject({ url: "/api/v1/query?query=1%2B1", headers: auth });
    expect(now.json().data.result).toEqual([NOW / 1000, "2"]);
  });

  it("answers an instant vector with string values and a bias warning", async () => {
    const q = encodeURIComponent('tidemark_error_ratio{service="api"}');
    const res = await app.inject({ url: `/api/v1/query?query=${q}&time=${(T + 6 * W) / 1000}`, headers: auth });
    expect(res.json()).toEqual({
      status: "success",
      data: {
        resultType: "vector",
        result: [
          {
            metric: {
              __name__: "tidemark_error_ratio",
              policy: "dashboard",
              window: "10s",
              service: "api",
              pane_kind: "on-time",
            },
            value: [(T + 6 * W) / 1000, "0.25"],
          },
        ],
      },
      warnings: [
        "dashboard policy: error ratio under-reported by ≈ 1.4 pp for api (measured against the reference over 12 closed windows)",
      ],
    });
  });

  it("answers a range query (RFC 3339 and float times, duration step) as a matrix", async () => {
    const start = new Date(T + W).toISOString();
    const body = `query=${encodeURIComponent('sum by (policy) (tidemark_requests{pane_kind="final"})')}&start=${start}&end=${(T + 3 * W) / 1000}&step=10s`;
    const res = await app.inject({ method: "POST", url: "/api/v1/query_range", headers: form, payload: body });
    expect(res.json()).toEqual({
      status: "success",
      data: {
        resultType: "matrix",
        result: [
          {
            metric: { policy: "billing" },
            values: [
              [(T + W) / 1000, "1"],
              [(T + 2 * W) / 1000, "1"],
              [(T + 3 * W) / 1000, "1"],
            ],
          },
          {
            metric: { policy: "dashboard" },
            values: [
              [(T + W) / 1000, "10"],
              [(T + 2 * W) / 1000, "11"],
              [(T + 3 * W) / 1000, "12"],
            ],
          },
        ],
      },
    });
  });

  it("lists labels, label values (match[] honoured, __name__ included), series and metadata", async () => {
    const labels = await app.inject({ url: "/api/v1/labels", headers: auth });
    expect(labels.json().data).toEqual(["__name__", "pane_kind", "policy", "quantile", "service", "window"]);
    const policies = await app.inject({ url: "/api/v1/label/policy/values", headers: auth });
    expect(policies.json()).toEqual({ status: "success", data: ["billing", "dashboard"] });
    const matched = await app.inject({
      url: `/api/v1/label/service/values?match[]=${encodeURIComponent('tidemark_requests{policy="billing"}')}`,
      headers: auth,
    });
    expect(matched.json().data).toEqual(["web"]);
    const names = await app.inject({ url: "/api/v1/label/__name__/values", headers: auth });
    expect(names.json().data).toContain("tidemark_bias_error_ratio_pp");
    expect(names.json().data).not.toContain("tidemark_bias_p99_pct"); // never measured
    const series = await app.inject({
      method: "POST",
      url: "/api/v1/series",
      headers: form,
      payload: `match[]=${encodeURIComponent('tidemark_requests{service="api"}')}`,
    });
    expect(series.json().data).toEqual([
      { __name__: "tidemark_requests", pane_kind: "final", policy: "dashboard", service: "api", window: "10s" },
      { __name__: "tidemark_requests", pane_kind: "on-time", policy: "dashboard", service: "api", window: "10s" },
    ]);
    const meta = await app.inject({ url: "/api/v1/metadata?metric=tidemark_error_ratio", headers: auth });
    expect(meta.json().data).toEqual({
      tidemark_error_ratio: [{ type: "gauge", help: expect.stringMatching(/^Errors \/ requests/), unit: "ratio" }],
    });
  });

  it("answers bad parameters with 400 bad_data naming the parameter, and the unsupported with 422", async () => {
    const get = async (url: string) => {
      const r = await app.inject({ url, headers: auth });
      return [r.statusCode, r.json()];
    };
    expect(await get("/api/v1/query?query=foo%7B")).toEqual([
      400,
      {
        status: "error",
        errorType: "bad_data",
        error: "parse error at char 5: unexpected end of input",
        code: "TM_PROMQL_PARSE",
      },
    ]);
    expect(await get("/api/v1/query")).toEqual([
      400,
      {
        status: "error",
        errorType: "bad_data",
        error: 'invalid parameter "query": is required, e.g. query=tidemark_requests',
        code: "TM_PROM_PARAM_INVALID",
      },
    ]);
    const [status, body] = await get("/api/v1/query?query=1&time=yesterday");
    expect([status, body.error]).toEqual([
      400,
      'invalid parameter "time": cannot parse "yesterday" to a valid timestamp: give unix seconds (1700000000.5) or RFC 3339 (2023-11-14T22:13:20Z)',
    ]);
    expect((await get("/api/v1/query_range?query=1&start=10&end=5&step=1"))[1].error).toBe(
      'invalid parameter "end": end timestamp must not be before start time',
    );
    expect((await get("/api/v1/query_range?query=1&start=0&end=100000&step=1"))[1].error).toMatch(
      /^invalid parameter "step": exceeded maximum resolution of 11,000 points/,
    );
    expect((await get("/api/v1/query_range?query=1&start=0&end=10&step=0"))[1].error).toMatch(
      /^invalid parameter "step": must be positive/,
    );
    expect((await get("/api/v1/series"))[1].error).toMatch(/^invalid parameter "match\[\]": is required/);
    const [code, unsupported] = await get("/api/v1/query?query=histogram_count(x)");
    expect([code, unsupported.errorType, unsupported.error]).toEqual([
      422,
      "execution",
      "histogram_count reads native histograms, which tidemark does not have (tidemark answers Prometheus 2.42's PromQL over floats: see docs/prometheus-api.md)",
    ]);
  });

  it("answers buildinfo as Prometheus 2.42.0 built as tidemark, exemplars as an empty success, unknown endpoints with a JSON 404", async () => {
    const b = await app.inject({ url: "/api/v1/status/buildinfo", headers: auth });
    expect([b.statusCode, b.json()]).toEqual([
      200,
      {
        status: "success",
        data: {
          version: "2.42.0",
          revision: "tidemark",
          branch: "tidemark",
          buildUser: "tidemark",
          buildDate: "",
          goVersion: `none (tidemark on Node.js ${process.versions.node})`,
        },
      },
    ]);
    const ex = await app.inject({
      method: "POST",
      url: "/api/v1/query_exemplars",
      headers: form,
      payload: `query=${encodeURIComponent("tidemark_requests")}&start=${T / 1000}&end=${NOW / 1000}`,
    });
    expect([ex.statusCode, ex.json()]).toEqual([200, { status: "success", data: [] }]);
    const noQuery = await app.inject({ url: "/api/v1/query_exemplars", headers: auth });
    expect([noQuery.statusCode, noQuery.json().error]).toEqual([
      400,
      'invalid parameter "query": is required, e.g. query=tidemark_requests',
    ]);
    const backwards = await app.inject({ url: "/api/v1/query_exemplars?query=up&start=10&end=5", headers: auth });
    expect([backwards.statusCode, backwards.json().error]).toEqual([
      400,
      'invalid parameter "end": end timestamp must not be before start time',
    ]);
    const r = await app.inject({ url: "/api/v1/rules", headers: auth });
    expect([r.statusCode, r.json().error]).toEqual([
      404,
      "/api/v1/rules is not served: tidemark answers /api/v1/query, query_range, query_exemplars, labels, label/<name>/values, series, metadata and status/buildinfo (docs/prometheus-api.md)",
    ]);
  });

  it("describes every family at its three levels in the metadata, sessions at service level only; limit as Prometheus", async () => {
    const meta = (await app.inject({ url: "/api/v1/metadata", headers: auth })).json().data as Record<
      string,
      Array<{ type: string; help: string; unit: string }>
    >;
    for (const family of [
      "requests",
      "errors",
      "error_ratio",
      "request_rate",
      "latency_ms",
      "users",
      "bias_count_pct",
      "bias_error_ratio_pp",
      "bias_p99_pct",
      "bias_users_pct",
      "emit_delay_seconds",
    ]) {
      expect(meta[`tidemark_${family}`]?.[0]?.help, family).toMatch(
        /One series per service \(labels policy, window, service\)\.$/,
      );
      expect(meta[`tidemark_route_${family}`]?.[0]?.help, family).toMatch(/labels policy, window, service, route\)\.$/);
      expect(meta[`tidemark_all_${family}`]?.[0]?.help, family).toMatch(
        /All services together.*\(labels policy, window\)\.$/,
      );
    }
    expect(meta["tidemark_sessions"]).toBeDefined();
    expect(Object.keys(meta).filter((n) => /^tidemark_(route|all)_session/.test(n))).toEqual([]);
    expect(Object.values(meta).every(([m]) => m?.type === "gauge")).toBe(true);
    const two = await app.inject({ url: "/api/v1/metadata?limit=2", headers: auth });
    expect(Object.keys(two.json().data)).toEqual(["tidemark_requests", "tidemark_errors"]);
    const none = await app.inject({ url: "/api/v1/metadata?limit=0", headers: auth });
    expect(none.json().data).toEqual({});
    const bad = await app.inject({ url: "/api/v1/metadata?limit=many", headers: auth });
    expect([bad.statusCode, bad.json().error]).toEqual([
      400,
      'invalid parameter "limit": cannot parse "many": give a whole number of metrics (10)',
    ]);
  });

  it("needs the read token (bearer header, ?token=, or basic auth with it as password)", async () => {
    const r = await app.inject({ url: "/api/v1/query?query=1" });
    expect([r.statusCode, r.json().status, r.json().errorType]).toEqual([401, "error", "unauthorized"]);
    expect((await app.inject({ url: "/api/v1/query?query=1&token=s3cret" })).statusCode).toBe(200);
    const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
    const withBasic = (pass: string) =>
      app.inject({ url: "/api/v1/query?query=1", headers: { authorization: basic("tm", pass) } });
    expect((await withBasic("s3cret")).statusCode).toBe(200);
    expect((await withBasic("wrong")).statusCode).toBe(401);
  });
});
