/**
 * The SLOs' error budgets over the whole period, persisted in JetStream (docs/slo.md, "Error
 * budget"): final panes through a real nats-server's TM_PANES into the dashboard server, whose
 * budget ledgers are written to TM_SLO_BUDGET and read back by a restarted dashboard that replays
 * no pane (its clock an hour on), and by one that replays every pane again (no double count).
 * Oracles: brute-force sums over the published panes, and the stored hours read back directly.
 * The store's writes, write failures (TM_SLO_BUDGET deleted under it) and restored hours are
 * counted on /metrics, which passes `promtool check metrics`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { Pane } from "@tidemark/engine/protocol";
import type { AlertsView } from "@tidemark/dashboard";
import { resolveConfig, startDashboard, type DashboardServer } from "@tidemark/dashboard";
import { waitFor } from "../index.js";
import { pane, publishPanes, startRig, type DashboardRig } from "../dashboard/fixtures.js";
import { metricOf, promtoolCheck } from "./slo-metrics.js";

const W = 10_000;
const HOUR = 3_600_000;
/** Three hours back: the first phase's panes span 2.5 hours of log time. */
const base = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
const FIRST = 900;
const SECOND = 60;
const slos = [
  {
    name: "checkout-errors",
    service: "checkout",
    objective: 0.99,
    policy: "alerting",
    tiers: [{ severity: "page", long: "1h", short: "5m", factor: 14.4 }],
  },
  {
    name: "checkout-latency",
    service: "checkout",
    objective: 0.99,
    policy: "alerting",
    sli: { latencyAboveMs: 300 },
    tiers: [{ severity: "page", long: "1h", short: "5m", factor: 14.4 }],
  },
];
let rig: DashboardRig;

/** Window n's final pane: counts vary, errors and slow requests at their own rates. */
const final = (n: number): Pane => {
  const count = 100 + (n % 13);
  const p = pane({
    policy: "alerting",
    service: "checkout",
    windowMs: W,
    start: base + n * W,
    seq: 3,
    kind: "final",
    count,
    errors: n % 7 === 0 ? 3 : n % 3,
  });
  return { ...p, value: { ...p.value, latencyAbove: { "300": (n * 5) % 11 } } } as Pane;
};
const remaining = (ps: readonly Pane[], bad: (p: Pane) => number): number => {
  const n = ps.reduce((a, p) => a + p.value.count, 0);
  const b = ps.reduce((a, p) => a + bad(p), 0);
  return 1 - b / n / 0.01;
};
const slow = (p: Pane): number => (p.value as { latencyAbove?: Record<string, number> }).latencyAbove?.["300"] ?? 0;
const views = async (url: string) => ((await (await fetch(`${url}/api/alerts`)).json()) as AlertsView).slos ?? [];
const publish = async (ps: readonly Pane[]) => {
  for (let i = 0; i < ps.length; i += 200) await publishPanes(rig.nc, ps.slice(i, i + 200));
};
/** The dashboard read every SLO at window end `end`. */
const readAt = (url: string, end: number) => async () => (await views(url)).every((v) => v.at === end);

/** Every hour TM_SLO_BUDGET holds, read back directly: subject → counts. */
async function storedHours(): Promise<Array<{ slo: string; hour: number; count: number; errors: number }>> {
  const jsm = await jetstreamManager(rig.nc);
  const n = (await jsm.streams.info("TM_SLO_BUDGET")).state.messages;
  const out: Array<{ slo: string; hour: number; count: number; errors: number }> = [];
  if (n === 0) return out;
  const messages = await (await jetstream(rig.nc).consumers.get("TM_SLO_BUDGET")).consume();
  for await (const m of messages) {
    const b = m.json<{ slo: string; hour: number; counts: { count: number; errors: number } }>();
    out.push({ slo: b.slo, hour: b.hour, count: b.counts.count, errors: b.counts.errors });
    if (m.info.pending === 0) break;
  }
  await messages.close();
  return out;
}

beforeAll(async () => {
  rig = await startRig({ slos } as never, { stream: true });
});
afterAll(async () => {
  await rig?.stop();
});

describe("the error budget over the whole period, persisted in TM_SLO_BUDGET", () => {
  it("writes each hour of final panes, restores it on restart, and counts a replayed final pane once", async () => {
    const first = Array.from({ length: FIRST }, (_, n) => final(n));
    await publish(first);
    const firstEnd = base + FIRST * W;
    await waitFor(readAt(rig.dash.url, firstEnd), 30_000, "the first phase read");
    const v1 = await views(rig.dash.url);
    expect(v1.map((v) => [v.name, v.budget.remainingRaw])).toEqual([
      [
        "checkout-errors",
        expect.closeTo(
          remaining(first, (p) => p.value.errors),
          9,
        ),
      ],
      ["checkout-latency", expect.closeTo(remaining(first, slow), 9)],
    ]);
    // The stored hours, read back directly, hold every final pane once: 2.5 hours of window ends → 3 hours per SLO.
    const hoursOf = (ps: readonly Pane[]) => new Set(ps.map((p) => p.window.end - (p.window.end % HOUR))).size;
    await waitFor(
      async () => {
        const h = await storedHours();
        return (
          h.length === 2 * hoursOf(first) &&
          h.reduce((a, x) => a + x.count, 0) === 2 * first.reduce((a, p) => a + p.value.count, 0)
        );
      },
      30_000,
      "every hour in TM_SLO_BUDGET",
    );
    const stored = await storedHours();
    const sum = (slo: string, f: "count" | "errors") =>
      stored.filter((h) => h.slo === slo).reduce((a, h) => a + h[f], 0);
    expect([sum("checkout-errors", "errors"), sum("checkout-latency", "errors")]).toEqual([
      first.reduce((a, p) => a + p.value.errors, 0),
      first.reduce((a, p) => a + slow(p), 0),
    ]);
    // Every stored hour was written once at least, none failed; /metrics passes promtool.
    const WRITES = "tidemark_dashboard_slo_budget_writes_total";
    expect(await metricOf(rig.dash.url, WRITES, 'outcome="ok"')).toBeGreaterThanOrEqual(stored.length);
    expect(await metricOf(rig.dash.url, WRITES, 'outcome="failed"')).toBe(0);
    expect(await metricOf(rig.dash.url, "tidemark_dashboard_slo_budget_restored_entries")).toBe(0);
    expect(await promtoolCheck(rig.dash.url)).toEqual({ code: 0, output: "" });
    await rig.dash.close();

    // Restarted an hour on: the replay of TM_PANES (the last hour by publish time, from now) holds none of these panes.
    // (Fixed before the second phase is published: its consumer, created once the budget is restored, starts here.)
    const restartAt = Date.now();
    const later = () => restartAt + HOUR;
    const dash2: DashboardServer = await startDashboard(
      resolveConfig({ logLevel: "warn", retryMs: "100ms", port: 0, nats: rig.nats.url, slos } as never),
      undefined,
      later,
    );
    const second = Array.from({ length: SECOND }, (_, k) => final(FIRST + k));
    const all = [...first, ...second];
    try {
      await publish(second);
      await waitFor(readAt(dash2.url, base + (FIRST + SECOND) * W), 30_000, "the second phase read");
      const v2 = await views(dash2.url);
      expect(v2.map((v) => [v.name, v.budget.remainingRaw, v.budget.remaining])).toEqual([
        [
          "checkout-errors",
          expect.closeTo(
            remaining(all, (p) => p.value.errors),
            9,
          ),
          expect.closeTo(
            remaining(all, (p) => p.value.errors),
            9,
          ),
        ],
        ["checkout-latency", expect.closeTo(remaining(all, slow), 9), expect.closeTo(remaining(all, slow), 9)],
      ]);
      expect(v2[0]?.budget.countedFrom).toBe(base);
      expect(await metricOf(dash2.url, "tidemark_dashboard_slo_budget_restored_entries")).toBe(stored.length);
      expect(await metricOf(dash2.url, "tidemark_dashboard_slo_budget_ignored_entries")).toBe(0);
      // The series covers the whole period too; the latency SLO's burn rate is the exact slow counts'.
      const t = base + (FIRST + SECOND) * W;
      const q = encodeURIComponent("tidemark_slo_budget_remaining_ratio");
      const series = (await (await fetch(`${dash2.url}/api/v1/query?query=${q}&time=${t / 1000}`)).json()) as {
        data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      expect(series.data.result.map((r) => [r.metric["slo"], Number(r.value[1])]).sort()).toEqual([
        [
          "checkout-errors",
          expect.closeTo(
            remaining(all, (p) => p.value.errors),
            9,
          ),
        ],
        ["checkout-latency", expect.closeTo(remaining(all, slow), 9)],
      ]);
      const last5m = all.slice(-30);
      expect(v2[1]?.tiers[0]?.short.raw).toBeCloseTo(
        last5m.reduce((a, p) => a + slow(p), 0) / last5m.reduce((a, p) => a + p.value.count, 0) / 0.01,
        9,
      );
    } finally {
      await dash2.close();
    }

    // Restarted again replaying every pane: each final pane is in TM_SLO_BUDGET already and counts once.
    const dash3 = await startDashboard(
      resolveConfig({ logLevel: "warn", retryMs: "100ms", port: 0, nats: rig.nats.url, slos } as never),
    );
    try {
      await waitFor(readAt(dash3.url, base + (FIRST + SECOND) * W), 30_000, "the replay read");
      const v3 = await views(dash3.url);
      expect(v3.map((v) => v.budget.remainingRaw)).toEqual([
        expect.closeTo(
          remaining(all, (p) => p.value.errors),
          9,
        ),
        expect.closeTo(remaining(all, slow), 9),
      ]);
      expect(await metricOf(dash3.url, "tidemark_dashboard_slo_budget_restored_entries")).toBe(2 * hoursOf(all));
      // TM_SLO_BUDGET deleted under the store: its writes fail, are counted and retried, and land
      // once the stream is back.
      const jsm = await jetstreamManager(rig.nc);
      const { config } = await jsm.streams.info("TM_SLO_BUDGET");
      await jsm.streams.delete("TM_SLO_BUDGET");
      const okBefore = await metricOf(dash3.url, WRITES, 'outcome="ok"');
      await publish([final(FIRST + SECOND)]);
      await waitFor(
        async () => (await metricOf(dash3.url, WRITES, 'outcome="failed"')) > 0,
        30_000,
        "a failed write counted",
      );
      await jsm.streams.add(config);
      await waitFor(
        async () => (await storedHours()).length === 2,
        30_000,
        "the failed hour written once TM_SLO_BUDGET is back",
      );
      expect(await metricOf(dash3.url, WRITES, 'outcome="ok"')).toBe(okBefore + 2);
      expect(await promtoolCheck(dash3.url)).toEqual({ code: 0, output: "" });
    } finally {
      await dash3.close();
    }
  });
});
