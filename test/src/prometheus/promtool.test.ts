/**
 * promtool 2.42 reads tidemark through the Prometheus API (docs/prometheus-api.md): its instant,
 * range, labels and series answers equal /api/panes for the same windows, and the sum over each
 * level's request metric is the true request count of the raw events
 * (docs/decisions/0037-prometheus-data-model.md); on a real nats-server, `tidemark engine`,
 * `tidemark merge` and `tidemark dashboard --token` fed by `tidemark backfill`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { ALL_SERVICES, type Pane, type TelemetryEvent } from "@tidemark/engine/protocol";
import { starTruth } from "../merge/merge-fixtures.js";
import { panesOf, promtool, promtoolJson, startPromRig, type PromRig } from "./prom-rig.js";

const W = 10_000;
const SERVICE = "api";
const SELECTOR = (metric: string, policy: string) =>
  `${metric}{policy="${policy}", window="10s", service="${SERVICE}"}`;

interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}
interface PromSeries {
  metric: Record<string, string>;
  values: Array<[number, string]>;
}

describe("promtool query against tidemark", () => {
  let rig: PromRig;
  let held: Pane[];
  beforeAll(async () => {
    rig = await startPromRig();
    held = (await panesOf(rig.url, "alerting", W, SERVICE)).filter((p) => p.kind !== "retract");
    expect(held.length).toBeGreaterThan(30);
  }, 240_000);
  afterAll(() => rig?.stop());

  it("query instant: the newest pane of the window ending at --time, with its kind", async () => {
    for (const p of [held[3], held[Math.floor(held.length / 2)], held[held.length - 1]] as Pane[]) {
      const t = p.window.end / 1000;
      const got = await promtoolJson<PromSample[]>([
        "instant",
        `--time=${t}`,
        rig.promtoolUrl,
        SELECTOR("tidemark_requests", "alerting"),
      ]);
      expect(got).toEqual([
        {
          metric: {
            __name__: "tidemark_requests",
            policy: "alerting",
            window: "10s",
            service: SERVICE,
            pane_kind: p.kind,
          },
          value: [t, String(p.value.count)],
        },
      ]);
    }
  });

  it("query range: every window's error ratio and p99 equal the pane's, at the window's end", async () => {
    const first = held[0] as Pane;
    const last = held[held.length - 1] as Pane;
    const range = [`--start=${first.window.end / 1000}`, `--end=${last.window.end / 1000}`, "--step=10s"];
    const byTime = async (expr: string): Promise<Map<number, string>> => {
      const series = await promtoolJson<PromSeries[]>(["range", ...range, rig.promtoolUrl, expr]);
      const out = new Map<number, string>();
      for (const s of series) for (const [t, v] of s.values) out.set(Math.round(t * 1000), v);
      return out;
    };
    const ratio = await byTime(SELECTOR("tidemark_error_ratio", "alerting"));
    const p99 = await byTime(SELECTOR('tidemark_latency_ms{quantile="0.99"}', "alerting").replace("}{", ", "));
    for (const p of held) {
      expect(Number(ratio.get(p.window.end)), p.id).toBe(p.value.errorRate);
      expect(Number(p99.get(p.window.end)), p.id).toBe(p.value.p99);
    }
  });

  it("increase() adds up the windows' counts in the range; rate() divides by its seconds", async () => {
    const p = held[held.length - 1] as Pane;
    const t = p.window.end;
    const want = held
      .filter((q) => q.window.end > t - 60_000 && q.window.end <= t)
      .reduce((n, q) => n + q.value.count, 0);
    const inc = await promtoolJson<PromSample[]>([
      "instant",
      `--time=${t / 1000}`,
      rig.promtoolUrl,
      `increase(${SELECTOR("tidemark_requests", "alerting")}[1m])`,
    ]);
    expect(inc.map((s) => Number(s.value[1]))).toEqual([want]);
    const rate = await promtoolJson<PromSample[]>([
      "instant",
      `--time=${t / 1000}`,
      rig.promtoolUrl,
      `rate(${SELECTOR("tidemark_requests", "alerting")}[1m])`,
    ]);
    expect(Number(rate[0]?.value[1])).toBeCloseTo(want / 60, 10);
  });

  it("query labels and query series list what the panes hold", async () => {
    const policies = await promtoolJson<string[]>(["labels", rig.promtoolUrl, "policy"]);
    expect(policies).toEqual([...new Set(rig.panes.map((p) => p.policy))].sort());
    const windows = await promtoolJson<string[]>(["labels", rig.promtoolUrl, "window"]);
    expect(windows).toEqual(["10s", "60s"]);
    const services = await promtoolJson<string[]>([
      "labels",
      `--match=tidemark_requests{policy="billing"}`,
      rig.promtoolUrl,
      "service",
    ]);
    // The service-level panes' services: the merge operator's "*" is no service.
    const serviceLevel = rig.panes.filter((p) => p.policy === "billing" && p.key.service !== ALL_SERVICES);
    expect(services).toEqual([...new Set(serviceLevel.map((p) => p.key.service))].sort());
    expect(
      await promtoolJson<string[]>([
        "labels",
        `--match=tidemark_route_requests{service="${SERVICE}"}`,
        rig.promtoolUrl,
        "route",
      ]),
    ).toEqual(
      [...new Set(rig.panes.filter((p) => p.key.service === SERVICE && p.key.route).map((p) => p.key.route))].sort(),
    );
    const series = await promtoolJson<Array<Record<string, string>>>([
      "series",
      `--match=${SELECTOR("tidemark_requests", "billing")}`,
      rig.promtoolUrl,
    ]);
    expect(series).toEqual([
      { __name__: "tidemark_requests", pane_kind: "final", policy: "billing", service: SERVICE, window: "10s" },
    ]);
  });

  it("sum by (policy) over each level's requests metric is the true request count of the raw events", async () => {
    const billing = defaultCoreConfig().policies.find((p) => p.name === "billing");
    if (billing?.watermark.kind !== "arrival-lag")
      throw new Error("the default billing policy has an arrival-lag watermark");
    const policy = { name: "billing", lagMs: billing.watermark.lagMs, graceMs: billing.graceMs };
    const size = 60_000;
    // Each event counts unless the watermark at its arrival (its ingest_ts − lag: the recording
    // arrives in ingest_ts order) had passed its window's end + grace (docs/semantics.md).
    const kept = (e: TelemetryEvent, end: number): boolean => e.ingest_ts - policy.lagMs < end + policy.graceMs;
    const truth = (end: number): number =>
      rig.events.filter((e) => e.ts >= end - size && e.ts < end && kept(e, end)).length;
    const star = starTruth(rig.events, policy, size);
    const finals = rig.panes
      .filter((p) => p.policy === "billing" && p.key.service === SERVICE && p.key.route === undefined)
      .filter((p) => p.window.end - p.window.start === size && p.kind === "final")
      .map((p) => p.window.end)
      .sort((a, b) => a - b);
    expect(finals.length).toBeGreaterThanOrEqual(4);
    // An instant selector takes each series' newest sample within the lookback (docs/prometheus-api.md,
    // "Semantics"): in a window where a service or route has no kept event, its series reads an older
    // window's count. So the raw count is the answer only in windows where every series has a kept event.
    const series = (es: readonly TelemetryEvent[]): [number, number] => [
      new Set(es.map((e) => e.service)).size,
      new Set(es.map((e) => `${e.service} ${e.route}`)).size,
    ];
    const everySeries = series(rig.events);
    const complete = (end: number): boolean => {
      const inWindow = rig.events.filter((e) => e.ts >= end - size && e.ts < end && kept(e, end));
      return series(inWindow).every((n, i) => n === everySeries[i]);
    };
    const compared = finals.slice(1).filter(complete);
    expect(compared.length, `of ${finals.length} final windows`).toBeGreaterThanOrEqual(3);
    for (const end of compared) {
      const sum = async (metric: string): Promise<PromSample[]> =>
        promtoolJson<PromSample[]>([
          "instant",
          `--time=${end / 1000}`,
          rig.promtoolUrl,
          `sum by (policy) (${metric}{policy="billing", window="60s"})`,
        ]);
      const want = [{ metric: { policy: "billing" }, value: [end / 1000, String(truth(end))] }];
      expect(await sum("tidemark_requests"), `services, window ending ${end}`).toEqual(want);
      expect(await sum("tidemark_route_requests"), `routes, window ending ${end}`).toEqual(want);
      const all = star.get(`billing|${encodeURIComponent(ALL_SERVICES)}|${size}|${end - size}`)?.count;
      expect(await sum("tidemark_all_requests"), `all services, window ending ${end}`).toEqual([
        { metric: { policy: "billing" }, value: [end / 1000, String(all)] },
      ]);
    }
  });

  it("bad and unsupported expressions fail with the server's message", async () => {
    const bad = await promtool(["instant", rig.promtoolUrl, "tidemark_requests{"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("parse error at char 19: unexpected end of input");
    const unsupported = await promtool(["instant", rig.promtoolUrl, "histogram_quantile(0.9, tidemark_requests)"]);
    expect(unsupported.code).not.toBe(0);
    expect(unsupported.stderr).toContain("function histogram_quantile is not supported");
  });

  it("refuses promtool without the read token", async () => {
    const run = await promtool(["instant", rig.url, "1+1"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/401|read token is required/);
  });
});
