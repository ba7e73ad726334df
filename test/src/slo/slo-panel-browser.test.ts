/**
 * The SLO panel in a real browser (docs/slo.md, "Dashboard panel"): crafted panes through a real
 * nats-server into the dashboard server; the panel shows each SLO's objective, budget with its
 * interval, time to exhaustion and every tier's burn rates raw and corrected with the bias,
 * may_flip and whether its alert fires — the numbers the server computes (its `slos` in
 * /api/alerts), which equal a brute force over the published panes.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { AlertsView } from "@tidemark/dashboard";
import type { Pane } from "@tidemark/engine/protocol";
import { ARTIFACTS, launchBrowser } from "../dashboard/browser.js";
import { pane, publishPanes, startRig, type DashboardRig } from "../dashboard/fixtures.js";
import { waitFor } from "../index.js";

const W = 10_000;
const base = Math.floor(Date.now() / W) * W - 20 * 60_000;
const N = 60;
const slos = [
  {
    name: "pay-availability",
    service: "pay",
    objective: 0.999,
    policy: "alerting",
    tiers: [
      { severity: "page", long: "1h", short: "5m", factor: 14.4 },
      { severity: "ticket", long: "1h", short: "10m", factor: 30 },
    ],
  },
  { name: "pay-latency", service: "pay", objective: 0.99, policy: "alerting", sli: { latencyAboveMs: 300 } },
];
/** The policy sees 1 % errors; the nowcast (bias measured for this service) says 2 % ± 0.2 pp. */
const at = (n: number): Pane => ({
  ...pane({
    policy: "alerting",
    service: "pay",
    windowMs: W,
    start: base + n * W,
    seq: 0,
    kind: "on-time",
    count: 200,
    errors: 2,
    bias: { countPct: 0, errorRatePp: -1, windows: 40, stage: "on-time", scope: "service" },
  }),
  nowcast: {
    value: { count: 200, errorRate: 0.02, p99: 250, users: 10 },
    spread: { count: null, errorRate: 0.002, p99: null, users: null },
    error: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 40 },
  },
});
/** Four significant digits, as the panel writes them. */
const sig = (x: number): string => String(Number(x.toPrecision(4)));

describe("the SLO panel", () => {
  let rig: DashboardRig;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  beforeAll(async () => {
    rig = await startRig({ slos } as never, { stream: true });
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await rig?.stop();
  });

  it("shows the server's burn rates, bias, budget and alerts per SLO and tier", async () => {
    const ps = Array.from({ length: N }, (_, n) => at(n));
    await publishPanes(rig.nc, ps);
    const end = base + N * W;
    let view: AlertsView | undefined;
    await waitFor(
      async () => {
        view = (await (await fetch(`${rig.dash.url}/api/alerts`)).json()) as AlertsView;
        const s = view.slos?.[0];
        return s?.at === end && s.alerts["page"] === "firing";
      },
      30_000,
      "the page to fire on the last pane",
    );
    const [avail, latency] = view?.slos ?? [];
    // The server's numbers against a brute force over the panes: raw 1 % and corrected 2 % of a 0.1 % budget.
    const [page5m, ticket] = avail?.tiers ?? [];
    expect([page5m?.long.raw, page5m?.short.raw, page5m?.long.corrected, page5m?.short.halfWidth]).toEqual([
      expect.closeTo(10, 9),
      expect.closeTo(10, 9),
      expect.closeTo(20, 9),
      expect.closeTo(2, 9),
    ]);
    expect([page5m?.crossed, page5m?.firing, ticket?.crossed, ticket?.firing]).toEqual([true, true, false, false]);
    expect(avail?.budget.remaining).toBeCloseTo(1 - 20, 9);
    expect(latency?.status).toBe(
      "no exact latency counts for 300 ms in the panes: the engine must be restarted with this config",
    );

    await page.goto(rig.dash.url);
    const panel = page.getByTestId("panel-slos");
    const card = panel.getByTestId("slo-pay-availability");
    await expect
      .poll(() => card.getByTestId("slo-budget").textContent(), { timeout: 15_000 })
      .toBe(`${sig(100 * (avail?.budget.remaining ?? NaN))} % ± ${sig(100 * (avail?.budget.halfWidth ?? NaN))}`);
    expect(await card.getByTestId("slo-objective").textContent()).toBe("99.9 %");
    expect(await card.getByTestId("slo-exhaustion").textContent()).toBe(avail?.budget.exhaustion);
    expect(avail?.budget.exhaustion).toBe("0s (budget spent)");
    const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")}Z`;
    expect(await card.getByTestId("slo-interval").textContent()).toBe(
      `30d: ${iso(end - 30 * 86_400_000)} – ${iso(end)}, counted from ${iso(base)}`,
    );
    const tiers = avail?.tiers ?? [];
    for (const [i, t] of tiers.entries())
      for (const [which, w] of [
        ["long", t.long],
        ["short", t.short],
      ] as const) {
        const row = card.getByTestId(`slo-tier-${i}-${which}`);
        expect(await row.getByTestId("raw").textContent()).toBe(`${sig(w.raw)}×`);
        expect(await row.getByTestId("corrected").textContent()).toBe(
          `${sig(w.corrected)}× ± ${sig(w.halfWidth ?? NaN)}`,
        );
        expect(await row.getByTestId("bias").textContent()).toBe(`${sig(w.biasPp ?? NaN)} pp`);
        if (which === "long") {
          expect(await row.getByTestId("factor").textContent()).toBe(`${t.factor}×`);
          expect(await row.getByTestId("may-flip").textContent()).toBe(t.mayFlip ? "may flip" : "no");
          expect(await row.getByTestId("fires").textContent()).toBe(t.firing ? "fires" : "quiet");
        }
      }
    // The bias is the panes' own: -1 pp; the 5 m page tier fires, the 10 m ticket tier does not cross 30×.
    expect(await card.getByTestId("slo-tier-0-short").getByTestId("bias").textContent()).toBe("-1 pp");
    expect(await card.getByTestId("slo-tier-0-long").getByTestId("fires").textContent()).toBe("fires");
    expect(await card.getByTestId("slo-tier-1-long").getByTestId("fires").textContent()).toBe("quiet");
    // The latency SLO without exact counts says why instead of reading 0.
    expect(await panel.getByTestId("slo-pay-latency").getByTestId("slo-status").textContent()).toBe(latency?.status);
    await page.screenshot({ path: join(ARTIFACTS, "slo-panel.png"), fullPage: true });
  });
});
