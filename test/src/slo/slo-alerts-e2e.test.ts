/**
 * SLO burn-rate alerts end to end (docs/slo.md): crafted panes through a real nats-server's
 * TM_PANES into the dashboard server, SLOBurnRate alerts to a real Alertmanager
 * (prometheus-alertmanager 0.25), read back with GET /api/v2/alerts and from its webhook
 * notifications. Oracles: brute-force sums over the published panes' counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import type { AlertsView } from "@tidemark/dashboard";
import { resolveConfig, startDashboard, type DashboardServer } from "@tidemark/dashboard";
import { waitFor } from "../index.js";
import { pane, publishPanes, startRig, type DashboardRig } from "../dashboard/fixtures.js";
import { startAlertmanager, type TestAlertmanager } from "../alerts/alertmanager.js";

const W = 10_000;
const PAGE_ONLY = [{ severity: "page", long: "1h", short: "5m", factor: 14.4 }];
let am: TestAlertmanager;
let rig: DashboardRig;
/** 70 minutes back: every pane's log time is in the past, like real ones. */
const base = Math.floor(Date.now() / W) * W - 70 * 60_000;

const at = (service: string, n: number, count: number, errors: number, over: Partial<Pane> = {}): Pane => ({
  ...pane({ policy: "alerting", service, windowMs: W, start: base + n * W, seq: 0, kind: "on-time", count, errors }),
  ...over,
});
const sloAlerts = async (slo: string) =>
  (await am.alerts()).filter((a) => a.labels["alertname"] === "SLOBurnRate" && a.labels["slo"] === slo);
const num = (x: number): string => String(Number(x.toPrecision(4)));
/** Brute force: errors / requests / (1 − objective) over panes. */
const burn = (ps: readonly Pane[], objective: number, pick = (p: Pane) => [p.value.count, p.value.errors]): number => {
  let n = 0;
  let e = 0;
  for (const p of ps) {
    const [c, x] = pick(p) as [number, number];
    n += c;
    e += x;
  }
  return e / n / (1 - objective);
};

beforeAll(async () => {
  am = await startAlertmanager();
  rig = await startRig(config() as never, { stream: true });
});
const config = () => ({
  alerts: { alertmanagers: [am.url], resendEvery: "1s" },
  slos: [
    {
      name: "checkout-availability",
      service: "checkout",
      objective: 0.999,
      policy: "alerting",
      minRequestsPerHour: 100,
    },
    { name: "search-availability", service: "search", objective: 0.999, policy: "alerting", tiers: PAGE_ONLY },
    { name: "pay-availability", service: "pay", objective: 0.999, policy: "alerting", tiers: PAGE_ONLY },
  ],
});
afterAll(async () => {
  await rig?.stop();
  await am?.stop();
});

describe("SLO burn-rate alerts to a real Alertmanager", () => {
  it("a burst after an hour of clean traffic pages within 5 minutes, with burn rates and budget as a brute force says", async () => {
    const clean = Array.from({ length: 360 }, (_, n) => at("checkout", n, 200, 0));
    const burst = Array.from({ length: 30 }, (_, k) => at("checkout", 360 + k, 200, 40));
    const all = [...clean, ...burst];
    await publishPanes(rig.nc, all);
    const last = all.length - 1;
    const long = burn(all.slice(last - 359), 0.999);
    const short = burn(all.slice(last - 29), 0.999);
    // The newest annotations are resent every second: wait for the ones of the last pane.
    await waitFor(
      async () => (await sloAlerts("checkout-availability")).some((a) => a.annotations["burn_rate_long"] === num(long)),
      30_000,
      "the page with the last pane's burn rates",
    );
    const alerts = await sloAlerts("checkout-availability");
    expect(alerts.map((a) => a.labels["severity"]).sort()).toEqual(["page", "ticket"]);
    const page = alerts.find((a) => a.labels["severity"] === "page");
    expect(page?.labels).toEqual({
      alertname: "SLOBurnRate",
      slo: "checkout-availability",
      service: "checkout",
      severity: "page",
      policy: "alerting",
    });
    expect(page?.annotations).toMatchObject({
      long_window: "1h",
      short_window: "5m",
      factor: "14.4",
      burn_rate_long: num(long),
      burn_rate_short: num(short),
      burn_rate_long_raw: num(long),
      bias: "not measured yet",
      // The period so far is this 65 minutes: 1 − their burn rate.
      budget_remaining: num(1 - burn(all, 0.999)),
      time_to_exhaustion: "0s (budget spent)",
      may_flip: "false",
    });
    // The dashboard's own alert view lists them too, and their firing in its history.
    const view = (await (await fetch(`${rig.dash.url}/api/alerts`)).json()) as AlertsView;
    const mine = view.active.filter((a) => a.labels["slo"] === "checkout-availability");
    expect(mine.map((a) => [a.alertname, a.labels["severity"], a.state]).sort()).toEqual([
      ["SLOBurnRate", "page", "firing"],
      ["SLOBurnRate", "ticket", "firing"],
    ]);
    expect(view.history.filter((h) => h.labels["slo"] === "checkout-availability" && h.event === "fired").length).toBe(
      2,
    );
    // Paged within 5 minutes of the burst's start (log time of the pane that fired it).
    const firedAt = Date.parse(page?.startsAt ?? "");
    expect(firedAt - (base + 360 * W)).toBeLessThanOrEqual(5 * 60_000);
    expect(firedAt).toBeGreaterThan(base + 360 * W);
  });

  it("fires on the corrected burn rate while the raw one stays under the factor", async () => {
    // The policy sees 1 % errors; the nowcast (bias measured for this service) says 2 % ± 0.2 pp.
    const ps = Array.from({ length: 60 }, (_, n) => {
      const p = at("pay", n, 200, 2, {
        bias: {
          countPct: 0,
          errorRatePp: -1,
          p99Pct: null,
          usersPct: null,
          windows: 40,
          stage: "on-time",
          scope: "service",
        },
      });
      return {
        ...p,
        nowcast: {
          value: { count: 200, errorRate: 0.02, p99: 250, users: 10 },
          spread: { count: null, errorRate: 0.002, p99: null, users: null },
          error: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 40 },
        },
      } satisfies Pane;
    });
    await publishPanes(rig.nc, ps);
    await waitFor(async () => (await sloAlerts("pay-availability")).length === 1, 30_000, "pay's page");
    await waitFor(
      async () => (await sloAlerts("pay-availability"))[0]?.annotations["burn_rate_short"] === `${num(20)} ± 2`,
      30_000,
      "the last pane's annotations",
    );
    const a = (await sloAlerts("pay-availability"))[0];
    const raw = burn(ps, 0.999);
    const corrected = burn(ps, 0.999, (p) => [
      p.nowcast?.value.count ?? 0,
      (p.nowcast?.value.count ?? 0) * (p.nowcast?.value.errorRate ?? 0),
    ]);
    expect(raw).toBeLessThan(14.4);
    expect(corrected).toBeGreaterThan(14.4);
    expect(a?.annotations).toMatchObject({
      burn_rate_long: `${num(corrected)} ± 2`,
      burn_rate_long_raw: num(raw),
      bias: "-1 pp error rate (policy − reference)",
      may_flip: "false",
    });
  });

  it("serves the tidemark_slo_* series in the Prometheus API, equal to the brute force", async () => {
    // pay's panes (the test above): raw 1 % and corrected 2 % in every window, objective 0.999.
    const t = (base + 60 * W) / 1000;
    const query = async (q: string) => {
      const res = await fetch(`${rig.dash.url}/api/v1/query?query=${encodeURIComponent(q)}&time=${t}`);
      const body = (await res.json()) as {
        status: string;
        data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      expect(body.status).toBe("success");
      return body.data.result;
    };
    await waitFor(
      async () => (await query('tidemark_slo_objective{slo="pay-availability"}')).length === 1,
      30_000,
      "pay's series",
    );
    const raw = await query('tidemark_slo_burn_rate{slo="pay-availability"}');
    expect(raw.map((r) => [r.metric["window"], Number(r.value[1])]).sort()).toEqual([
      ["1h", expect.closeTo(10, 9)],
      ["5m", expect.closeTo(10, 9)],
    ]);
    const corrected = await query('tidemark_slo_burn_rate_corrected{slo="pay-availability", window="5m"}');
    expect(corrected.map((r) => [r.metric, Number(r.value[1])])).toEqual([
      [{ __name__: "tidemark_slo_burn_rate_corrected", slo: "pay-availability", window: "5m" }, expect.closeTo(20, 9)],
    ]);
    const budget = await query('tidemark_slo_budget_remaining_ratio{slo="pay-availability"}');
    expect(Number(budget[0]?.value[1])).toBeCloseTo(1 - 20, 9);
    expect(Number((await query('tidemark_slo_objective{slo="pay-availability"}'))[0]?.value[1])).toBe(0.999);
    // PromQL over them: the page condition as Sloth would write it, on the corrected series.
    const page = await query(
      'tidemark_slo_burn_rate_corrected{slo="pay-availability",window="1h"} > 14.4 and on(slo) tidemark_slo_burn_rate_corrected{slo="pay-availability",window="5m"} > 14.4',
    );
    expect(page.length).toBe(1);
    const series = (await (
      await fetch(
        `${rig.dash.url}/api/v1/series?match[]=${encodeURIComponent('{__name__=~"tidemark_slo_.*",slo="pay-availability"}')}`,
      )
    ).json()) as { data: unknown[] };
    expect(series.data.length).toBe(6);
    const meta = (await (
      await fetch(`${rig.dash.url}/api/v1/metadata?metric=tidemark_slo_burn_rate_corrected`)
    ).json()) as { data: Record<string, unknown> };
    expect(Object.keys(meta.data)).toEqual(["tidemark_slo_burn_rate_corrected"]);
  });

  it("retracts a page raised on an early pane that the on-time pane contradicts; Alertmanager shows it resolved", async () => {
    await publishPanes(
      rig.nc,
      Array.from({ length: 30 }, (_, n) => at("search", n, 200, 2)),
    );
    await publishPanes(rig.nc, [
      at("search", 30, 200, 150, { kind: "early", emitDelayMs: -5000, emittedAt: base + 31 * W - 5000 }),
    ]);
    await waitFor(async () => (await sloAlerts("search-availability")).length === 1, 30_000, "search's early page");
    await publishPanes(rig.nc, [at("search", 30, 200, 2, { seq: 1 })]);
    await waitFor(
      async () => (await sloAlerts("search-availability")).length === 0,
      30_000,
      "the page to be retracted",
    );
    await waitFor(
      () => am.notified.some((n) => n.status === "resolved" && n.labels["slo"] === "search-availability"),
      30_000,
      "the resolved notification",
    );
    const resolved = am.notified.find((n) => n.status === "resolved" && n.labels["slo"] === "search-availability");
    expect(resolved?.annotations["retracted"]).toMatch(
      /^retracted: the on-time panes of .* read 10\.0× \/ 10\.0×, below the factor$/,
    );
  });

  it("a restart rebuilds the burn rates, the budget and the firing page from the TM_PANES replay", async () => {
    const query = async (url: string, q: string, t: number) => {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}&time=${t / 1000}`);
      const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } };
      return body.data.result.map((r) => r.value[1]);
    };
    const t = base + 390 * W;
    const q =
      '{__name__=~"tidemark_slo_budget_remaining_ratio|tidemark_slo_burn_rate_corrected", slo="checkout-availability"}';
    const before = await query(rig.dash.url, q, t);
    // 7 distinct tier windows (1h, 5m, 6h, 30m, 1d, 2h, 3d) and the budget.
    expect(before.length).toBe(8);
    await rig.dash.close();
    const dash: DashboardServer = await startDashboard(
      resolveConfig({ logLevel: "warn", retryMs: "100ms", port: 0, nats: rig.nats.url, ...config() } as never),
    );
    try {
      await waitFor(async () => (await query(dash.url, q, t)).length === 8, 30_000, "the replay to rebuild the series");
      expect(await query(dash.url, q, t)).toEqual(before);
      // The page is still firing in Alertmanager, sent again after the replay.
      expect((await sloAlerts("checkout-availability")).map((a) => a.labels["severity"]).sort()).toEqual([
        "page",
        "ticket",
      ]);
    } finally {
      await dash.close();
    }
  });
});
