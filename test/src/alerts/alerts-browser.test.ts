/**
 * Alerts in the app, in a real browser: an alert opened from its generatorURL lands on its panel
 * under its policy, marked there and listed with its history; its retraction shows in both.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { AlertsView } from "@tidemark/dashboard";
import { ARTIFACTS, launchBrowser } from "../dashboard/browser.js";
import { pane, publishPanes, startRig, type DashboardRig } from "../dashboard/fixtures.js";
import { waitFor } from "../index.js";

const W = 10_000;
const RULE = { alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting", window="10s", route=""} > 0.05' };

describe("alerts in the dashboard app", () => {
  let rig: DashboardRig;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const start = Math.floor(Date.now() / W) * W - W;
  const early = pane({
    policy: "alerting",
    service: "checkout",
    windowMs: W,
    start,
    seq: 0,
    kind: "early",
    count: 200,
    errors: 12,
    emitDelayMs: -4000,
    bias: {
      countPct: 1,
      errorRatePp: -1.4,
      p99Pct: null,
      usersPct: null,
      windows: 12,
      spread: { countPct: 0.3, errorRatePp: 0.3, p99Pct: null, usersPct: null },
      stage: "early",
      age: "0.5-0.75",
      scope: "service",
      provisional: false,
    },
  });

  beforeAll(async () => {
    rig = await startRig({ alerts: { rules: [RULE] } }, { stream: true });
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await rig?.stop();
  });

  it("opens the alert's panel from its link, marks it there and lists it; the retraction shows in the history", async () => {
    await publishPanes(rig.nc, [early]);
    let view: AlertsView | undefined;
    await waitFor(
      async () => {
        view = (await (await fetch(`${rig.dash.url}/api/alerts`)).json()) as AlertsView;
        return view.active.length === 1;
      },
      20_000,
      "the alert to fire",
    );
    const alert = view?.active[0];
    expect(alert?.mayFlip).toBe(true);
    await page.goto(alert?.generatorURL ?? "");
    const panel = page.getByTestId("panel-errorRate");
    await expect
      .poll(() => panel.getByTestId("panel-alert").textContent(), { timeout: 15_000 })
      .toContain("firing: HighErrorRate · checkout 0.06 > 0.05 (early pane) · may flip: bias \u22121.4 \u00b1 0.3 pp");
    // The policy list fills as panes of the policy arrive: the select shows it once they did.
    await expect.poll(() => panel.getByTestId("policy").inputValue()).toBe("alerting");
    // Only the panel of the alert's metric is marked.
    expect(await page.getByTestId("panel-requests").getByTestId("panel-alert").count()).toBe(0);
    const list = page.getByTestId("panel-alerts");
    expect(await list.getByTestId("active-alert").count()).toBe(1);
    await expect
      .poll(() => list.getByTestId("alert-counts-HighErrorRate").textContent())
      .toBe("HighErrorRate: 1 fired · 0 retracted · 0 resolved");
    await page.screenshot({ path: join(ARTIFACTS, "alerts-firing.png") });

    await publishPanes(rig.nc, [
      { ...early, seq: 1, kind: "on-time", value: { ...early.value, errors: 2, errorRate: 0.01 } },
    ]);
    await expect.poll(() => panel.getByTestId("panel-alert").count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => list.getByTestId("alert-event").first().textContent()).toContain("retracted");
    expect(await list.getByTestId("alert-event").first().textContent()).toContain(
      "retracted: raised on the early pane of the window ending",
    );
    expect(await list.getByTestId("alerts-none").textContent()).toBe("No alert is pending or firing.");
    await page.screenshot({ path: join(ARTIFACTS, "alerts-retracted.png") });
  });
});
