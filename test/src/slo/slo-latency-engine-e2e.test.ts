/**
 * The latency SLI end to end on the engine (docs/slo.md, "Latency SLI"): a config file with an SLO
 * `sli: { latencyAboveMs: 250 }` on the `billing` policy, a real nats-server, an engine worker and
 * the merge operator (which count the slow events exactly per pane, `value.latencyAbove`), a
 * backfilled recording, then the dashboard server reading TM_PANES. Its `tidemark_slo_burn_rate`
 * samples (Prometheus API) at every window end and the SLO's budget equal a brute force over the
 * recording's events the policy accepts (billing's panes are final: exact).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { resolveConfig, startDashboard, type AlertsView, type DashboardServer } from "@tidemark/dashboard";
import { waitFor } from "../index.js";
import { makeRecording, runBackfill, stopGracefully, tempDir, writeRecording } from "../engine/engine-fixtures.js";
import { endStack, startStack, starTruth, waitForMergeEnd, type Stack } from "../merge/merge-fixtures.js";

const W = 10_000;
const SLOW_MS = 250;
const OBJECTIVE = 0.9;
const SLO = {
  name: "api-latency",
  service: "api",
  objective: OBJECTIVE,
  policy: "billing",
  sli: { latencyAboveMs: SLOW_MS },
  tiers: [{ severity: "page", long: "1m", short: "30s", factor: 2 }],
};

describe("the latency SLI on the engine's panes (real NATS, worker + merge, dashboard)", () => {
  let stack: Stack | undefined;
  let dash: DashboardServer | undefined;
  afterAll(async () => {
    await dash?.close();
    await endStack(stack);
  });

  it("burns on the slow events the policy accepted, exactly", async () => {
    const dir = tempDir("slo-latency-engine");
    const config = join(dir, "tidemark.config.json");
    writeFileSync(config, JSON.stringify({ slos: [SLO] }));
    const events = makeRecording({ events: 12_000, seed: 11, services: ["api", "web"], startMs: Date.now() - 600_000 });
    const file = writeRecording(dir, events);
    const flags = ["--config", config, "--checkpoint-every", "2s", "--idle-timeout", "120s"];
    stack = await startStack(dir, [[]], flags, ["--config", config]);
    const endTs = (await runBackfill(stack.nats.url, file)).endOfRecordingTs;
    await waitForMergeEnd(stack.nc, endTs);
    await Promise.all([...stack.workers, stack.merge].map((p) => stopGracefully(p)));

    // Brute force: per window of api, the events billing accepts, and those slower than 250 ms.
    const billing = defaultCoreConfig().policies.find((p) => p.name === "billing")!;
    const lagMs = billing.watermark.kind === "arrival-lag" ? billing.watermark.lagMs : 0;
    const truth = starTruth(
      events.filter((e) => e.service === "api"),
      { name: "billing", lagMs, graceMs: billing.graceMs },
      W,
    );
    const windows = [...truth.values()].map((t, i) => ({
      end: Number([...truth.keys()][i]?.split("|")[3]) + W,
      count: t.count,
      slow: t.latencies.filter((l) => l > SLOW_MS).length,
    }));
    const burn = (t: number, spanMs: number): number => {
      const ws = windows.filter((w) => w.end > t - spanMs && w.end <= t);
      const n = ws.reduce((a, w) => a + w.count, 0);
      return ws.reduce((a, w) => a + w.slow, 0) / n / (1 - OBJECTIVE);
    };
    const ends = windows.map((w) => w.end).sort((a, b) => a - b);
    const last = ends.at(-1) as number;
    expect(ends.length).toBeGreaterThan(20);

    dash = await startDashboard(
      resolveConfig({ logLevel: "warn", retryMs: "100ms", port: 0, nats: stack.nats.url, slos: [SLO] } as never),
    );
    const url = dash.url;
    const view = async () =>
      ((await (await fetch(`${url}/api/alerts`)).json()) as AlertsView).slos?.find((s) => s.name === SLO.name);
    await waitFor(async () => (await view())?.at === last, 30_000, "the SLO read at the last window end");

    // Every window end's sample, from the Prometheus API, is the brute force's.
    const from = ends[6] as number;
    const q = new URLSearchParams({
      query: `tidemark_slo_burn_rate{slo="${SLO.name}",window="1m"}`,
      start: String(from / 1000),
      end: String(last / 1000),
      step: "10",
    });
    const res = (await (await fetch(`${url}/api/v1/query_range?${q}`)).json()) as {
      data: { result: Array<{ values: Array<[number, string]> }> };
    };
    const got = res.data.result[0]?.values.map(([t, v]) => [t * 1000, Number(v)]) ?? [];
    const want = ends.filter((t) => t >= from).map((t) => [t, burn(t, 60_000)]);
    expect(got.length).toBe(want.length);
    for (const [i, [t, v]] of got.entries()) {
      expect(t).toBe(want[i]?.[0]);
      expect(v, `${t}`).toBeCloseTo(want[i]?.[1] as number, 9);
    }
    expect(want.some(([, b]) => (b as number) > 0)).toBe(true);
    // The SLO's view: the burn rates at the last end and the budget over every window, exact.
    const v = await view();
    expect(v?.status).toBeNull();
    expect(v?.tiers[0]?.long.raw).toBeCloseTo(burn(last, 60_000), 9);
    expect(v?.tiers[0]?.short.raw).toBeCloseTo(burn(last, 30_000), 9);
    expect(v?.tiers[0]?.long.corrected).toBeCloseTo(burn(last, 60_000), 9);
    const n = windows.reduce((a, w) => a + w.count, 0);
    const bad = windows.reduce((a, w) => a + w.slow, 0);
    expect(v?.budget.remainingRaw).toBeCloseTo(1 - bad / n / (1 - OBJECTIVE), 9);
  }, 60_000);
});
