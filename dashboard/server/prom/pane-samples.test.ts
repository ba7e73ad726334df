import { describe, expect, it } from "vitest";
import type { Pane, PaneBias } from "@tidemark/engine/protocol";
import { testPane, type PaneSpec } from "../../protocol/pane.fixture.js";
import { evaluateInstant, parsePromql, type Value } from "../promql/index.js";
import { biasWarnings } from "./bias-warnings.js";
import { PaneSamples } from "./pane-samples.js";

const W = 10_000;
const T = 1_700_000_000_000; // a window start, ms
const NO_BIAS: PaneBias = { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 };

const pane = (s: PaneSpec & { users?: number; p99?: number }): Pane => {
  const p = testPane({ windowMs: W, ...s });
  return { ...p, value: { ...p.value, users: s.users ?? p.value.users, p99: s.p99 ?? p.value.p99 } };
};
const store = (discarding: string[] = []) =>
  new PaneSamples({ windowsPerSeries: 100, maxWindows: 10_000, discardingPolicies: discarding });

function query(samples: PaneSamples, q: string, atMs: number): Value {
  return evaluateInstant(parsePromql(q), samples, atMs);
}
function values(v: Value): Array<[Record<string, string>, number]> {
  if (v.type !== "vector") throw new Error(`expected a vector, got ${v.type}`);
  return v.samples.map((s) => [{ ...s.labels }, s.value]);
}

describe("PaneSamples: series from panes", () => {
  it("puts one sample per window at its end, from the newest pane (by seq), labelled with policy, window, service, pane_kind", () => {
    const s = store();
    s.apply(pane({ start: T, seq: 0, kind: "early", count: 5 }));
    s.apply(pane({ start: T, seq: 2, kind: "on-time", count: 9, errors: 3 }));
    s.apply(pane({ start: T, seq: 1, kind: "early", count: 7 })); // older seq: ignored
    s.apply(pane({ start: T, seq: 2, kind: "on-time", count: 9, errors: 3 })); // replayed: ignored
    expect(values(query(s, "tidemark_requests", T + W - 1))).toEqual([]);
    expect(values(query(s, "tidemark_requests", T + W))).toEqual([
      [
        {
          __name__: "tidemark_requests",
          policy: "dashboard",
          window: "10s",
          service: "api",
          pane_kind: "on-time",
        },
        9,
      ],
    ]);
    expect(values(query(s, "tidemark_error_ratio", T + W))[0]?.[1]).toBe(3 / 9);
    expect(values(query(s, "tidemark_errors", T + W))[0]?.[1]).toBe(3);
    expect(values(query(s, "tidemark_request_rate", T + W))[0]?.[1]).toBe(0.9);
    expect(values(query(s, 'tidemark_latency_ms{quantile="0.99"}', T + W))[0]?.[1]).toBe(410);
    expect(values(query(s, "tidemark_users", T + W))[0]?.[1]).toBe(40);
    expect(values(query(s, "tidemark_emit_delay_seconds", T + W))[0]?.[1]).toBe(2);
    expect(s.size).toBe(1);
  });

  it("serves route-level panes as tidemark_route_* with a route label, 60 s windows as 60s; tidemark_* never holds them", () => {
    const s = store();
    s.apply(pane({ start: T, route: "/cart", windowMs: 60_000, count: 4 }));
    expect(values(query(s, "tidemark_route_requests", T + 60_000))).toEqual([
      [
        {
          __name__: "tidemark_route_requests",
          policy: "dashboard",
          window: "60s",
          service: "api",
          route: "/cart",
          pane_kind: "on-time",
        },
        4,
      ],
    ]);
    expect(values(query(s, 'tidemark_route_latency_ms{quantile="0.99"}', T + 60_000))[0]?.[0]).toMatchObject({
      route: "/cart",
      quantile: "0.99",
    });
    expect(values(query(s, "tidemark_requests", T + 60_000))).toEqual([]);
    expect(values(query(s, "tidemark_all_requests", T + 60_000))).toEqual([]);
  });

  it("has no sample for a window whose newest pane is a retract, and one again after the next pane", () => {
    const s = store();
    s.apply(pane({ start: T, seq: 0, kind: "early", count: 5 }));
    s.apply(pane({ start: T, seq: 1, kind: "retract", count: 5 }));
    expect(values(query(s, "tidemark_requests", T + W))).toEqual([]);
    s.apply(pane({ start: T, seq: 2, kind: "late", count: 6 }));
    expect(values(query(s, "tidemark_requests", T + W))[0]?.[1]).toBe(6);
  });

  it("adds up a discarding policy's deltas per window, once per (id, seq)", () => {
    const s = store(["fast"]);
    const d = (seq: number, count: number, errors: number, p99: number, kind: Pane["kind"] = "early") =>
      pane({ policy: "fast", start: T, seq, kind, count, errors, p99, users: 3 });
    s.apply(d(0, 4, 1, 100));
    s.apply(d(1, 6, 0, 300));
    s.apply(d(1, 6, 0, 300)); // redelivered: not added twice
    s.apply(d(2, 2, 1, 200, "final"));
    const at = T + W;
    expect(values(query(s, "tidemark_requests", at))).toEqual([
      [{ __name__: "tidemark_requests", policy: "fast", window: "10s", service: "api", pane_kind: "final" }, 12],
    ]);
    expect(values(query(s, "tidemark_errors", at))[0]?.[1]).toBe(2);
    expect(values(query(s, "tidemark_error_ratio", at))[0]?.[1]).toBe(2 / 12);
    expect(values(query(s, 'tidemark_latency_ms{quantile="0.99"}', at))[0]?.[1]).toBe(300); // upper bound
    expect(values(query(s, "tidemark_users", at))[0]?.[1]).toBe(9); // upper bound
    // Other policies' panes are full values.
    s.apply(pane({ start: T, seq: 0, count: 4 }));
    s.apply(pane({ start: T, seq: 1, count: 6 }));
    expect(values(query(s, 'tidemark_requests{policy="dashboard"}', at))[0]?.[1]).toBe(6);
  });

  it("serves bias series only where the bias is measured, and session metrics from session panes", () => {
    const s = store();
    s.apply(pane({ start: T, seq: 0, count: 5 }));
    s.apply(pane({ start: T + W, seq: 0, count: 5, bias: { ...NO_BIAS, errorRatePp: -1.4, windows: 30 } }));
    expect(values(query(s, "tidemark_bias_error_ratio_pp", T + W))).toEqual([]);
    expect(values(query(s, "tidemark_bias_error_ratio_pp", T + 2 * W))[0]?.[1]).toBe(-1.4);
    expect(values(query(s, "tidemark_bias_count_pct", T + 2 * W))).toEqual([]);
    const session: Pane = {
      ...pane({ start: T, count: 7, errors: 1 }),
      id: `billing|sessions:api|${W}|${T}`,
      policy: "billing",
      key: { service: "api", user: "*" },
      sessions: { events: 19 },
    };
    s.apply(session);
    expect(values(query(s, "tidemark_session_events", T + W))[0]?.[1]).toBe(19);
    expect(values(query(s, "tidemark_sessions", T + W))).toEqual([
      [{ __name__: "tidemark_sessions", policy: "billing", window: "10s", service: "api", pane_kind: "on-time" }, 7],
    ]);
    expect(values(query(s, 'tidemark_session_duration_ms{quantile="0.5"}', T + W))[0]?.[1]).toBe(20);
    expect(values(query(s, 'tidemark_requests{policy="billing"}', T + W))).toEqual([]);
  });

  it("keeps at most the configured windows per series and in all", () => {
    const s = new PaneSamples({ windowsPerSeries: 8, maxWindows: 20, discardingPolicies: [] });
    for (let k = 0; k < 30; k++) s.apply(pane({ start: T + k * W, count: k }));
    expect(s.size).toBeLessThanOrEqual(9);
    expect(values(query(s, "min_over_time(tidemark_requests[1h])", T + 30 * W))[0]?.[1]).toBeGreaterThanOrEqual(21);
    s.apply(pane({ start: T, seq: 5, count: 99 })); // a forgotten window is not taken again
    expect(values(query(s, "max_over_time(tidemark_requests[1h])", T + 30 * W))[0]?.[1]).toBe(29);
    for (const service of ["a", "b", "c"]) for (let k = 0; k < 8; k++) s.apply(pane({ service, start: T + k * W }));
    expect(s.size).toBeLessThanOrEqual(20);
  });

  it("lists label sets per pane_kind seen in a time range", () => {
    const s = store();
    s.apply(pane({ start: T, kind: "final" }));
    s.apply(pane({ start: T + W, kind: "early" }));
    const kinds = (from: number, to: number) =>
      s.seriesIn(parsePromqlMatchers("tidemark_requests"), from, to).map((l) => l["pane_kind"]);
    expect(kinds(-Infinity, Infinity)).toEqual(["final", "early"]);
    expect(kinds(T + 2 * W, Infinity)).toEqual(["early"]);
    expect(kinds(0, T + W)).toEqual(["final"]);
  });
});

function parsePromqlMatchers(q: string) {
  const e = parsePromql(q);
  if (e.type !== "selector") throw new Error("not a selector");
  return e.matchers;
}

describe("biasWarnings", () => {
  const biased = (service: string, bias: Partial<PaneBias>, policy = "dashboard") =>
    pane({ policy, service, start: T, count: 10, bias: { ...NO_BIAS, windows: 30, ...bias } });

  it("states the bias that fits the metric queried, with its sign, per policy, naming the services", () => {
    const s = store();
    s.apply(biased("checkout", { errorRatePp: -1.4, countPct: 3.25, p99Pct: 12, usersPct: -2 }));
    s.apply(biased("cart", { errorRatePp: -1.4, countPct: 3.25, p99Pct: 12, usersPct: -2 }));
    s.apply(biased("api", { errorRatePp: 0.02 }, "alerting"));
    const warn = (q: string) => {
      const views = s.select(parsePromqlMatchers(q));
      evaluateInstant(parsePromql(q), { select: () => views }, T + W);
      return biasWarnings(views);
    };
    expect(warn("tidemark_error_ratio")).toEqual([
      "dashboard policy: error ratio under-reported by ≈ 1.4 pp for cart, checkout (measured against the reference over 30 closed windows)",
    ]);
    expect(warn('tidemark_requests{service="cart"}')).toEqual([
      "dashboard policy: counts under-reported by ≈ 3.3 % for cart (measured against the reference over 30 closed windows)",
    ]);
    expect(warn('tidemark_latency_ms{quantile="0.99", service="cart"}')).toEqual([
      "dashboard policy: p99 latency over-reported by ≈ 12.0 % for cart (measured against the reference over 30 closed windows)",
    ]);
    expect(warn('tidemark_users{service="cart"}')).toEqual([
      "dashboard policy: distinct users over-reported by ≈ 2.0 % for cart (measured against the reference over 30 closed windows)",
    ]);
    expect(warn("tidemark_emit_delay_seconds")).toEqual([]);
    expect(warn('tidemark_error_ratio{policy="alerting"}')).toEqual([]); // rounds to 0.0
    expect(warn('tidemark_error_ratio{service="nope"}')).toEqual([]);
  });
});

describe("PaneSamples: one metric per level, so sum() over a metric counts each request once (docs/decisions/0037-prometheus-data-model.md)", () => {
  // a and b saw 100 distinct users each, 50 of them both: the engine's "*" pane says 150. a's 6
  // requests went to two routes.
  const s = store();
  s.apply(pane({ service: "a", start: T, count: 6, users: 100 }));
  s.apply(pane({ service: "a", route: "/x", start: T, count: 2, users: 30 }));
  s.apply(pane({ service: "a", route: "/y", start: T, count: 4, users: 90 }));
  s.apply(pane({ service: "b", start: T, count: 4, users: 100 }));
  s.apply(pane({ service: "*", start: T, count: 10, users: 150 }));
  const at = (q: string) => values(query(s, q, T + W));
  const services = (q: string) => at(q).map(([l, v]) => [l["service"] ?? null, v]);

  it('service level: no route label and no "*" service, whatever the matchers', () => {
    expect(services("tidemark_users")).toEqual([
      ["a", 100],
      ["b", 100],
    ]);
    expect(at("tidemark_users").every(([l]) => !("route" in l))).toBe(true);
    expect(services('tidemark_users{service=~".*"}').map(([name]) => name)).toEqual(["a", "b"]);
    expect(services('tidemark_users{service="*"}')).toEqual([]);
    expect(s.seriesIn(parsePromqlMatchers("tidemark_users"), -Infinity, Infinity).map((l) => l["service"])).toEqual([
      "a",
      "b",
    ]);
  });

  it("the sum of each count family over its series is the true count: 10 requests at every level", () => {
    expect(at("sum(tidemark_requests)")).toEqual([[{}, 10]]);
    expect(at("sum(tidemark_route_requests)")).toEqual([[{}, 6]]); // b sent no route panes here
    expect(at('sum by (service) (tidemark_route_requests{service="a"})')).toEqual([[{ service: "a" }, 6]]);
    expect(at("sum(tidemark_all_requests)")).toEqual([[{}, 10]]);
    expect(services("sum by (service) (tidemark_requests)")).toEqual([
      ["a", 6],
      ["b", 4],
    ]);
  });

  it("all services: tidemark_all_* without a service label, the merged users rather than the sum", () => {
    expect(at("tidemark_all_users")).toEqual([
      [{ __name__: "tidemark_all_users", policy: "dashboard", window: "10s", pane_kind: "on-time" }, 150],
    ]);
    // What the services' sum over-counts: 150 of 200.
    expect(at("sum(tidemark_all_users) / sum(tidemark_users)")).toEqual([[{}, 0.75]]);
    expect(s.seriesIn(parsePromqlMatchers("tidemark_all_users"), -Infinity, Infinity)).toEqual([
      { __name__: "tidemark_all_users", policy: "dashboard", window: "10s", pane_kind: "on-time" },
    ]);
  });
});
