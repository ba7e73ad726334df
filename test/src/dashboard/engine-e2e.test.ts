/**
 * The end-to-end run (docs/architecture.md, "Data flow"): nats-server, `tidemark engine`,
 * `tidemark dashboard`, then `tidemark backfill` of a small recording; the browser must show, for
 * a panel, exactly the value, bias and delay of the newest pane the engine wrote to TM_PANES,
 * follow a per-panel policy switch, and make a silenced partition obvious in the health panel.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { eventsSubject, HEARTBEAT_HEADER, type Pane } from "@tidemark/engine/protocol";
import type { Page } from "playwright-core";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  makeRecording,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { ARTIFACTS, launchBrowser } from "./browser.js";
import { biasExtras, closeTo, expectedBias, expectedDelay, shownBias, shownDelay, shownNumber } from "./shown-text.js";

const W = 10_000;
/** What the display of a duration rounds away: ms below 1 s, 3 digits of seconds, whole seconds past a minute. */
const durationRounding = (ms: number): number => (ms < 1000 ? 0.5 : ms < 60_000 ? ms * 0.005 : 500);
const SERVICE = "api";
const SILENT = 5;

describe("engine → TM_PANES → dashboard → browser (backfilled recording)", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let engine: CliProcess;
  let dash: CliProcess;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let url: string;
  let newest: (policy: string) => Pane;
  let heartbeats: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    const dir = tempDir("dashboard-e2e");
    // About eight minutes of traffic that arrived from 14.5 minutes ago: inside the "last 15
    // minutes" view, and longer than the 5 min bias reference horizon, so later panes carry a
    // measured bias.
    const events = makeRecording({ events: 24_000, seed: 7, startMs: Date.now() - 14.5 * 60_000 });
    engine = startEngine(nats.url, join(dir, "data"), ["--idle-timeout", "1h"]);
    dash = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url]);
    await engine.ready;
    url = (await dash.ready)["dashboard"] as string;
    const summary = await runBackfill(nats.url, writeRecording(dir, events));
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "end of recording");
    const panes = [...lastPanes(dedupePanes(await readStream(nc, "TM_PANES")).values()).values()];
    newest = (policy) => {
      const mine = panes.filter(
        (p) =>
          p.policy === policy &&
          p.key.service === SERVICE &&
          p.key.route === undefined &&
          p.window.end - p.window.start === W,
      );
      const last = mine.sort((a, b) => b.window.start - a.window.start)[0];
      if (!last) throw new Error(`no ${policy} pane for ${SERVICE}`);
      return last;
    };
    // The dashboard has consumed the engine's panes once its REST view holds the newest ones.
    for (const policy of ["dashboard", "billing"]) {
      const want = newest(policy);
      await waitFor(
        async () => {
          const res = await fetch(`${url}/api/panes?policy=${policy}&window=10s&service=${SERVICE}`);
          const { panes: held } = (await res.json()) as { panes: Pane[] };
          return held.some((p) => p.id === want.id && p.seq === want.seq);
        },
        15_000,
        `the dashboard to hold ${want.id}#${want.seq}`,
      );
    }
    browser = await launchBrowser();
    page = await browser.context.newPage();
  }, 180_000);
  afterAll(async () => {
    clearInterval(heartbeats);
    await browser?.close();
    for (const p of [dash, engine]) if (p) await stopGracefully(p);
    await nc?.close();
    await nats?.stop();
  });

  const headline = async (panel: string) => {
    const root = page.getByTestId(`panel-${panel}`);
    const text = async (id: string) => ((await root.getByTestId(id).textContent()) ?? "").trim();
    return {
      value: await text("value"),
      bias: await text("bias"),
      delay: await text("delay"),
      kind: await text("kind"),
    };
  };

  function expectHeadline(h: Awaited<ReturnType<typeof headline>>, p: Pane): void {
    const ctx = `${JSON.stringify(h)} vs pane ${JSON.stringify(p)}`;
    expect(closeTo(shownNumber(h.value), p.value.count / (W / 1000)), ctx).toBe(true);
    expect(h.kind, ctx).toBe(p.kind === "retract" ? "retracted" : p.kind);
    // The recording outlasts the reference horizon: the pane carries a measured bias, and the page
    // shows exactly it (policy − reference; countPct is the shortfall) and the pane's delays.
    expect(p.bias.countPct, ctx).not.toBeNull();
    expect(p.bias.windows, ctx).toBeGreaterThan(0);
    expect(h.bias, ctx).toBe(
      expectedBias(-(p.bias.countPct as number), "%", p.bias.windows, biasExtras(p.bias, "countPct")),
    );
    expect(h.delay, ctx).toBe(expectedDelay(p.emitDelayMs, p.pipelineLagMs));
    const bias = shownBias(h.bias);
    expect(bias?.windows, ctx).toBe(p.bias.windows);
    expect(closeTo(bias?.value ?? NaN, -(p.bias.countPct as number)), ctx).toBe(true);
    const delay = shownDelay(h.delay);
    expect(Math.abs(delay.emitMs - p.emitDelayMs), ctx).toBeLessThanOrEqual(durationRounding(p.emitDelayMs));
    expect(Math.abs(delay.pipelineMs - p.pipelineLagMs), ctx).toBeLessThanOrEqual(durationRounding(p.pipelineLagMs));
  }

  it("shows the newest pane's value, bias and emit delay, and follows a per-panel policy switch", async () => {
    await page.goto(`${url}/?services=${SERVICE}&window=10s&range=15m`);
    await page.getByTestId("panel-requests").getByTestId("kind").waitFor();
    await page.getByTestId("connection").filter({ hasText: "Streaming" }).waitFor();
    expectHeadline(await headline("requests"), newest("dashboard"));
    const errorsBefore = await headline("errorRate");
    const dash0 = newest("dashboard");
    expect(closeTo(shownNumber(errorsBefore.value), dash0.value.errorRate * 100)).toBe(true);
    // The distinct-users panel shows the policy's users bias (a shortfall, shown as policy − reference).
    const usersText = (await headline("users")).bias;
    expect(dash0.bias.usersPct, JSON.stringify(dash0.bias)).not.toBeNull();
    expect(usersText).toBe(
      expectedBias(-(dash0.bias.usersPct as number), "%", dash0.bias.windows, biasExtras(dash0.bias, "usersPct")),
    );
    const usersBias = shownBias(usersText);
    expect(usersBias?.windows).toBe(dash0.bias.windows);
    expect(closeTo(usersBias?.value ?? NaN, -(dash0.bias.usersPct as number)), JSON.stringify(dash0.bias)).toBe(true);

    await page.getByTestId("panel-requests").getByTestId("policy").selectOption("billing");
    const billing = newest("billing");
    await waitFor(
      async () => {
        const h = await headline("requests");
        return h.kind === "final" && h.value !== "–" && closeTo(shownNumber(h.value), billing.value.count / (W / 1000));
      },
      10_000,
      "the billing pane in the request-rate headline",
    );
    expectHeadline(await headline("requests"), billing);
    expect(await headline("errorRate")).toEqual(errorsBefore);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-engine-e2e.png"), fullPage: true });
  });

  it("shows a silenced partition holding the watermark back", async () => {
    // Every partition but one keeps sending heartbeats, as ingest does; partition 5 goes silent.
    const js = jetstream(nc);
    const status = await waitForStatus(nc, () => true, 5000, "a status");
    const base = status.logTime ?? 0;
    const t0 = Date.now();
    const beat = (): void => {
      for (let p = 0; p < 8; p++) {
        if (p === SILENT) continue;
        const h = headers();
        h.set(HEARTBEAT_HEADER, String(base + (Date.now() - t0)));
        void js.publish(eventsSubject(p), "", { headers: h }).catch(() => undefined);
      }
    };
    beat();
    heartbeats = setInterval(beat, 250);
    const health = page.getByTestId("panel-health");
    await health
      .getByTestId(`partition-${SILENT}`)
      .filter({ hasText: "stalled · holds watermark" })
      .waitFor({ timeout: 20_000 });
    expect(await health.getByTestId("health-alarm").textContent()).toMatch(
      new RegExp(`partition ${SILENT} is \\d+ s behind and holds it back`),
    );
    expect(await health.getByTestId("partition-0").textContent()).toContain("active");
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-engine-silenced.png"), fullPage: true });
  });
});
