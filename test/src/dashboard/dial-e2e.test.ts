/**
 * The honest dial in a real browser: panes carrying per-service bias with intervals, scope,
 * provisional marks and nowcasts, and engine status with per-stage and per-service dials, are
 * published to a real nats-server; a real dashboard server reads them and Chromium shows them
 * (docs/websocket-protocol.md, "Bias on screen", "Nowcast", "Server → client").
 */
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SUBJECT_STATUS,
  type EngineStatusMessage,
  type LatenessCorrelation,
  type Pane,
  type PaneBias,
  type PaneNowcast,
  type PolicyStatusWire,
  type ServiceDial,
  type StageBias,
} from "@tidemark/engine/protocol";
import type { Page } from "playwright-core";
import { waitFor } from "../index.js";
import { ARTIFACTS, launchBrowser } from "./browser.js";
import { pane, publishPanes, startRig, type DashboardRig } from "./fixtures.js";

const W = 10_000;
const M = "\u2212";
const PIPELINE_MS = 40;

/** A bias of one stage: the means given, each with the same interval half-width. */
function bias(
  stage: PaneBias["stage"],
  means: { countPct?: number; errorRatePp: number },
  spread: number | null,
  over: Partial<PaneBias> = {},
): PaneBias {
  return {
    countPct: means.countPct ?? 1,
    errorRatePp: means.errorRatePp,
    p99Pct: -2,
    usersPct: 1,
    windows: 30,
    spread: { countPct: spread, errorRatePp: spread, p99Pct: spread, usersPct: spread },
    stage,
    scope: "service",
    provisional: false,
    ...over,
  };
}
const lateness = (over: Partial<LatenessCorrelation> = {}): LatenessCorrelation => ({
  onTimeEvents: 40_000,
  onTimeErrors: 400,
  lateEvents: 2000,
  lateErrors: 20,
  z: 0.1,
  p: 0.9,
  ratio: 1,
  flagged: false,
  ...over,
});
const stage = (s: PaneBias["stage"] & string, emitDelayMs: number, errorRatePp: number, spread: number): StageBias => ({
  windowMs: W,
  stage: s,
  bias: bias(s, { errorRatePp }, spread),
  emitDelayMs,
});
const dial = (service: string, onTime: number, final: number, l = lateness()): ServiceDial => ({
  service,
  windowMs: W,
  onTime: bias("on-time", { errorRatePp: onTime }, 0.3),
  final: bias("final", { errorRatePp: final }, 0.1),
  lateness: l,
});

/** checkout's late requests fail 9× more often than its on-time ones: flagged. */
const CHECKOUT_LATENESS = lateness({ lateErrors: 180, ratio: 9, z: 41.2, p: 1e-300, flagged: true });

function policy(name: string, emitDelayMs: number, stages: StageBias[], services: ServiceDial[]): PolicyStatusWire {
  return {
    name,
    label: name,
    strategy: `arrival-lag ${emitDelayMs / 1000}s`,
    graceMs: 0,
    mode: "accumulating",
    watermark: null,
    lateAccepted: 0,
    dropped: 0,
    bias: stages.find((s) => s.stage === "final")?.bias ?? bias("final", { errorRatePp: 0 }, null),
    emitDelayMs,
    stages,
    services,
  };
}

function status(now: number): EngineStatusMessage & { pipelineLag: { p50: number; p99: number } } {
  return {
    worker: "engine-0-1",
    wallTime: now,
    logTime: now - PIPELINE_MS,
    pipelineLagMs: PIPELINE_MS,
    // What the runtime adds later (docs/websocket-protocol.md, "Server → client"): shown when present.
    pipelineLag: { p50: 35, p99: 420 },
    partitions: [{ partition: 0, logTime: now - PIPELINE_MS, idle: false, lastSeq: 10 }],
    heldBackBy: null,
    policies: [
      policy(
        "dashboard",
        2000,
        [stage("on-time", 2000, -0.33, 0.08), stage("final", 32_000, -0.05, 0.04)],
        [dial("auth", 0.02, 0), dial("checkout", -1.4, -0.2, CHECKOUT_LATENESS), dial("search", 0.03, 0.01)],
      ),
      policy(
        "alerting",
        10_000,
        [stage("on-time", 10_000, -0.4, 0.1), stage("late", 25_000, -0.1, 0.06), stage("final", 40_000, -0.02, 0.05)],
        [dial("checkout", -1, -0.05), dial("search", -0.1, 0)],
      ),
    ],
    openWindows: 12,
    stateKeys: 40,
    stateBytes: 1_048_576,
    checkpointAgeMs: 1000,
    eventsTotal: 123_456,
  };
}

/** The dashboard policy's panes: on-time, one per (service, window), the newest window with a nowcast. */
function panes(now: number): Pane[] {
  const newest = Math.floor(now / W) * W - W;
  const out: Pane[] = [];
  for (let start = newest - 5 * 60_000; start <= newest; start += W) {
    const wobble = Math.sin(start / 37_000);
    const checkout = pane({
      policy: "dashboard",
      service: "checkout",
      windowMs: W,
      start,
      seq: 1,
      kind: "on-time",
      count: Math.round(1000 + 80 * wobble),
      errors: Math.round(29 + 4 * wobble),
      pipelineLagMs: PIPELINE_MS,
    });
    const search = pane({ ...spec("search", start), count: Math.round(3000 + 200 * wobble), errors: 24 });
    const auth = pane({ ...spec("auth", start), count: Math.round(800 + 50 * wobble), errors: 3 });
    const last = start === newest;
    out.push(
      {
        ...checkout,
        ...(last ? { value: { ...checkout.value, count: 1000, errors: 29, errorRate: 0.029 } } : {}),
        bias: bias("on-time", { errorRatePp: -1.4 }, 0.3),
        ...(last ? { nowcast: CHECKOUT_NOWCAST } : {}),
      },
      // search: no reference window closed yet for it, a provisional lower bound.
      {
        ...search,
        bias: bias("on-time", { countPct: 0.8, errorRatePp: 0.02 }, null, { windows: 3, provisional: true }),
      },
      // auth: no sample of its own yet, the policy-wide figure.
      { ...auth, bias: bias("on-time", { errorRatePp: -0.33 }, 0.1, { scope: "policy" }) },
    );
  }
  return out;
}
const spec = (service: string, start: number) => ({
  policy: "dashboard",
  service,
  windowMs: W,
  start,
  seq: 1,
  kind: "on-time" as const,
  count: 1,
  pipelineLagMs: PIPELINE_MS,
});
const CHECKOUT_NOWCAST: PaneNowcast = {
  value: { count: 1019, errorRate: 0.043, p99: 260, users: 11 },
  spread: { count: 8, errorRate: 0.003, p99: 12, users: 1 },
  error: { countPct: 0.2, errorRatePp: -0.1, p99Pct: 1.5, usersPct: 0.4, windows: 12 },
};

describe("the honest dial in a real browser (panes and status published to a real nats-server)", () => {
  let rig: DashboardRig;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let statusTimer: NodeJS.Timeout;
  const shots = mkdtempSync(join(tmpdir(), "tidemark-dial-e2e-"));

  beforeAll(async () => {
    rig = await startRig({}, { stream: true });
    await publishPanes(rig.nc, panes(Date.now()));
    const publish = (): void => rig.nc.publish(SUBJECT_STATUS, JSON.stringify(status(Date.now())));
    publish();
    statusTimer = setInterval(publish, 500);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    clearInterval(statusTimer);
    await browser?.close();
    await rig?.stop();
  });

  const panel = (name: string) => page.getByTestId(`panel-${name}`);
  const text = async (root: ReturnType<typeof panel>, id: string) =>
    ((await root.getByTestId(id).first().textContent()) ?? "").trim();

  it("serves one window size's dials on /api/policies, and refuses a bad size", async () => {
    await waitFor(
      async () =>
        ((await (await fetch(`${rig.dash.url}/api/policies`)).json()) as { policies: unknown[] }).policies.length === 2,
      10_000,
      "engine status in /api/policies",
    );
    const res = await fetch(`${rig.dash.url}/api/policies?window=10s`);
    const body = (await res.json()) as {
      policies: Array<{ name: string; windowMs: number; bias: PaneBias; services: ServiceDial[]; stages: StageBias[] }>;
    };
    const dashboard = body.policies.find((p) => p.name === "dashboard");
    expect(dashboard?.windowMs).toBe(W);
    expect(dashboard?.bias.errorRatePp).toBe(-0.05);
    expect(dashboard?.services.find((d) => d.service === "checkout")?.lateness).toEqual(CHECKOUT_LATENESS);
    expect(body.policies.find((p) => p.name === "alerting")?.stages.map((s) => s.stage)).toEqual([
      "on-time",
      "late",
      "final",
    ]);
    const bad = await fetch(`${rig.dash.url}/api/policies?window=60s`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe(
      'query parameter "window" must be a window size the engine reports: 10s',
    );
  });

  it("warns on a flagged service's panels and shows each bias with its interval, scope and provisional mark", async () => {
    await page.goto(`${rig.dash.url}/?services=checkout&window=10s&range=15m`);
    const errors = panel("errorRate");
    await errors.getByTestId("lateness-warning").waitFor();
    expect(await text(errors, "lateness-warning")).toBe(
      "\u26a0 late requests of checkout fail 9\u00d7 more often: dashboard under-reports its error rate by \u2248 1.4 pp",
    );
    // Every panel of the flagged service carries it.
    expect(await panel("requests").getByTestId("lateness-warning").count()).toBe(1);
    expect(await text(errors, "bias")).toBe(`bias ${M}1.4 \u00b1 0.3 pp, 30 win.`);
    expect(await text(errors, "legend-bias")).toBe(`${M}1.4 \u00b1 0.3 pp, 30 win.`);

    // Every service: the legend gives each its own bias; only checkout is warned about.
    await page.goto(`${rig.dash.url}/?window=10s&range=15m`);
    await errors.getByTestId("legend-bias").nth(2).waitFor();
    expect(await errors.getByTestId("legend-bias").allTextContents()).toEqual([
      `${M}0.33 \u00b1 0.1 pp, 30 win., policy-wide`,
      `${M}1.4 \u00b1 0.3 pp, 30 win.`,
      "\u2265 0.02 pp over so far (provisional, 3 win.)",
    ]);
    expect(await panel("requests").getByTestId("legend-bias").nth(2).textContent()).toBe(
      "\u2265 0.8 % under so far (provisional, 3 win.)",
    );
    expect(await errors.getByTestId("lateness-warning").count()).toBe(1);
    // Pipeline-lag percentiles, when the engine reports them.
    expect(await text(panel("health"), "lag-percentiles")).toBe("p50 35 ms \u00b7 p99 420 ms");
  });

  it("shows the newest window corrected as an estimate when the panel's nowcast is on, and remembers it in the URL", async () => {
    await page.goto(`${rig.dash.url}/?services=checkout&window=10s&range=15m`);
    const errors = panel("errorRate");
    await errors.getByTestId("kind").waitFor();
    expect(await text(errors, "value")).toBe("2.9 %");
    expect(await errors.getByTestId("nowcast-toggle").getAttribute("aria-pressed")).toBe("false");
    await errors.getByTestId("nowcast-toggle").click();
    await errors.getByTestId("estimate").waitFor();
    const shown = async () => ({
      value: await text(errors, "value"),
      interval: await text(errors, "interval"),
      measured: await text(errors, "measured"),
      error: await text(errors, "nowcast-error"),
      legend: await text(errors, "legend-estimate"),
    });
    const expected = {
      value: "\u2248 4.3 %",
      interval: "\u00b1 0.3 %",
      measured: "measured 2.9 %",
      error: `nowcast error ${M}0.1 pp, 12 win.`,
      legend: "\u2248 4.3 % \u00b1 0.3",
    };
    expect(await shown()).toEqual(expected);
    expect(new URL(page.url()).searchParams.get("nowcast.errorRate")).toBe("1");
    // The other panels keep their measured values.
    expect(await panel("requests").getByTestId("estimate").count()).toBe(0);
    await page.waitForTimeout(800);
    await page.screenshot({ path: join(shots, "dial-nowcast.png"), fullPage: true });
    await errors.screenshot({ path: join(shots, "dial-nowcast-panel.png") });

    await page.reload();
    await errors.getByTestId("estimate").waitFor();
    expect(await errors.getByTestId("nowcast-toggle").getAttribute("aria-pressed")).toBe("true");
    expect(await shown()).toEqual(expected);
  });

  it("draws the frontier per (policy, stage): alerting's on-time (10 s) and final (40 s) joined by a line, each with its own bias", async () => {
    await page.goto(`${rig.dash.url}/?window=10s&range=15m&nowcast.errorRate=1`);
    const frontier = panel("frontier");
    await frontier.getByTestId("frontier-alerting-final").waitFor();
    const at = async (id: string) => {
      const g = frontier.getByTestId(id);
      return `${await g.getAttribute("data-x")},${await g.getAttribute("data-y")}`;
    };
    const onTime = await at("frontier-alerting-on-time");
    const final = await at("frontier-alerting-final");
    const line = ((await frontier.getByTestId("frontier-line-alerting").getAttribute("points")) ?? "").split(" ");
    expect(line).toEqual([onTime, await at("frontier-alerting-late"), final]);
    expect(await frontier.getByTestId("frontier-alerting-on-time").getAttribute("data-bias")).toBe("-0.4");
    expect(await frontier.getByTestId("frontier-alerting-final").getAttribute("data-bias")).toBe("-0.02");
    const row = async (id: string) =>
      (await frontier.getByTestId(id).locator("td").allTextContents()).map((t) => t.trim());
    expect(await row("frontier-row-alerting-on-time")).toEqual([
      "alerting",
      "on-time",
      "10 s",
      `${M}1 \u00b1 0.1 %`,
      `${M}0.4 \u00b1 0.1 pp`,
      `${M}2 \u00b1 0.1 %`,
      `${M}1 \u00b1 0.1 %`,
      "30",
    ]);
    expect((await row("frontier-row-alerting-final")).slice(0, 5)).toEqual([
      "alerting",
      "final",
      "40 s",
      `${M}1 \u00b1 0.05 %`,
      `${M}0.02 \u00b1 0.05 pp`,
    ]);
    await page.waitForTimeout(800);
    const shot = join(shots, "dial.png");
    await page.screenshot({ path: shot, fullPage: true });
    copyFileSync(shot, join(ARTIFACTS, "dashboard-dial.png"));
    console.log(`dial screenshots in ${shots}`);

    // One service selected: its own dial, at the pooled stages' delays.
    await page.goto(`${rig.dash.url}/?services=checkout&window=10s&range=15m`);
    await frontier.getByTestId("frontier-scope").filter({ hasText: "checkout" }).waitFor();
    await frontier.getByTestId("frontier-alerting-final").waitFor();
    expect(await frontier.getByTestId("frontier-alerting-on-time").getAttribute("data-bias")).toBe("-1");
    expect(await frontier.getByTestId("frontier-alerting-on-time").getAttribute("data-delay")).toBe("10040");
    expect(await frontier.getByTestId("frontier-dashboard-on-time").getAttribute("data-bias")).toBe("-1.4");
    expect((await row("frontier-row-dashboard-on-time")).slice(0, 5)).toEqual([
      "dashboard",
      "on-time",
      "2.04 s",
      `${M}1 \u00b1 0.3 %`,
      `${M}1.4 \u00b1 0.3 pp`,
    ]);
  });
});
