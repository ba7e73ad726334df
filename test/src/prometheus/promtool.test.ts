/**
 * promtool 2.42 reads tidemark through the Prometheus API (docs/prometheus-api.md): its instant,
 * range, labels and series answers equal /api/panes for the same windows, on a real nats-server,
 * `tidemark engine` and `tidemark dashboard --token` fed by `tidemark backfill`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { panesOf, promtool, promtoolJson, startPromRig, type PromRig } from "./prom-rig.js";

const W = 10_000;
const SERVICE = "api";
const SELECTOR = (metric: string, policy: string) =>
  `${metric}{policy="${policy}", window="10s", service="${SERVICE}", route=""}`;

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
    expect(services).toEqual(
      [...new Set(rig.panes.filter((p) => p.policy === "billing").map((p) => p.key.service))].sort(),
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
