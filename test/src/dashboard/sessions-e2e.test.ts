/**
 * Sessions end to end (docs/semantics.md, "Session windows"): nats-server, `tidemark engine
 * --sessions`, `tidemark dashboard`, then `tidemark backfill` of a small recording with users. The
 * engine's session panes on TM_PANES hold per (policy, service, 60 s window) the sessions that ended
 * there; billing's newest final one is exactly what an offline sessionizer finds in the recording,
 * and the dashboard's REST view and the browser's Sessions panel show the newest cell's count,
 * error-session share and duration p50 for each policy, and follow the panel's policy switch.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import type { Page } from "playwright-core";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import {
  connectNats,
  dedupePanes,
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
import { sessionCells, type OfflineCell } from "../sessions/sessionize.js";
import { biasExtras, closeTo, expectedBias, expectedDelay, shownDuration, shownNumber } from "./shown-text.js";

const W = 60_000;
const GAP = 20_000;
const SERVICE = "api";

interface Expected {
  start: number;
  sessions: number;
  errorSessions: number;
  /** Where the shown duration p50 must lie (ms). */
  p50: [lo: number, hi: number];
}

/** The newest 60 s session cell of the service under `policy` in the pane stream: its latest pane. */
function newestCell(panes: Iterable<Pane>, policy: string): Pane {
  let newest: Pane | undefined;
  for (const p of panes) {
    if (p.policy !== policy || !p.sessions || p.key.service !== SERVICE || p.kind === "retract") continue;
    if (p.window.end - p.window.start !== W) continue;
    if (
      !newest ||
      p.window.start > newest.window.start ||
      (p.window.start === newest.window.start && p.seq > newest.seq)
    )
      newest = p;
  }
  if (!newest) throw new Error(`no ${policy} session pane of ${SERVICE}`);
  return newest;
}

/** What the panel must show of a cell: its counts, and its p50 up to the page's rounding. */
function shownOf(cell: Pane): Expected {
  const p50 = cell.value.p50;
  return {
    start: cell.window.start,
    sessions: cell.value.count,
    errorSessions: cell.value.errors,
    p50: [p50 * 0.99 - 500, p50 * 1.01 + 500],
  };
}

/** Offline sessions of the service (gap GAP) ending in [start, start + W): count, error sessions, durations. */
function offlineWindow(events: readonly TelemetryEvent[], start: number): OfflineCell {
  return sessionCells(events, GAP, W).get(`${SERVICE}|${start}`) ?? { count: 0, errors: 0, events: 0, durations: [] };
}

describe("engine --sessions → TM_PANES → dashboard → Sessions panel", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let engine: CliProcess;
  let dash: CliProcess;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let url: string;
  const expected = new Map<string, Expected>();

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    const dir = tempDir("dashboard-sessions");
    // About eight minutes of traffic of 100 users per service, arrived from 14.5 minutes ago: inside
    // the "last 15 minutes" view, and longer than the 5 min bias reference horizon, so the session
    // panes carry a measured bias.
    const events = makeRecording({ events: 24_000, seed: 19, startMs: Date.now() - 14.5 * 60_000 });
    engine = startEngine(nats.url, join(dir, "data"), ["--idle-timeout", "1h", "--sessions", "--session-gap", "20s"]);
    dash = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url]);
    await engine.ready;
    url = (await dash.ready)["dashboard"] as string;
    const summary = await runBackfill(nats.url, writeRecording(dir, events));
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "end of recording");
    const panes = [...dedupePanes(await readStream(nc, "TM_PANES")).values()];
    // Billing drops nothing here (the recording's delays stay under its 100 s): its final cell is
    // exactly what an offline sessionizer finds over the whole recording.
    const billing = newestCell(panes, "billing");
    expect(billing.kind).toBe("final");
    const truth = offlineWindow(events, billing.window.start);
    expect([billing.value.count, billing.value.errors]).toEqual([truth.count, truth.errors]);
    const n = truth.durations.length;
    const mid = Math.round(0.5 * (n - 1));
    // DDSketch (1 % relative accuracy) answers within the order statistics around the median.
    expect(billing.value.p50).toBeGreaterThanOrEqual((truth.durations[Math.max(0, mid - 1)] ?? 0) * 0.99);
    expect(billing.value.p50).toBeLessThanOrEqual((truth.durations[Math.min(n - 1, mid + 1)] ?? 0) * 1.01);
    for (const policy of ["dashboard", "billing"]) {
      // The dashboard has folded the engine's session panes once its REST view holds the count of
      // the newest cell in TM_PANES (re-read each time: the engine may still be publishing newer panes).
      let want = shownOf(newestCell(panes, policy));
      await waitFor(
        async () => {
          want = shownOf(newestCell([...dedupePanes(await readStream(nc, "TM_PANES")).values()], policy));
          const res = await fetch(`${url}/api/sessions?policy=${policy}&window=60s&service=${SERVICE}`);
          const { panes: held } = (await res.json()) as { panes: Pane[] };
          const cell = held.find((p) => p.window.start === want.start);
          return cell !== undefined && cell.value.count === want.sessions && cell.value.errors === want.errorSessions;
        },
        15_000,
        `the dashboard to count ${want.sessions} ${policy} sessions of ${SERVICE} ending at ${want.start}`,
      );
      expected.set(policy, want);
    }
    browser = await launchBrowser();
    page = await browser.context.newPage();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    for (const p of [dash, engine]) if (p) await stopGracefully(p);
    await nc?.close();
    await nats?.stop();
  });

  const shown = async () => {
    const root = page.getByTestId("panel-sessions");
    const text = async (id: string) => ((await root.getByTestId(id).textContent()) ?? "").trim();
    return {
      value: await text("value"),
      p50: await text("detail-p50"),
      errors: await text("detail-errors"),
      bias: await text("bias"),
      delay: await text("delay"),
    };
  };

  /** The dashboard's cell of the window (REST), whose bias and delays the headline shows. */
  const cellOf = async (policy: string, start: number): Promise<Pane> => {
    const res = await fetch(`${url}/api/sessions?policy=${policy}&window=60s&service=${SERVICE}`);
    const cell = ((await res.json()) as { panes: Pane[] }).panes.find((p) => p.window.start === start);
    if (!cell) throw new Error(`no ${policy} session cell of ${SERVICE} at ${start}`);
    return cell;
  };

  function expectShown(s: Awaited<ReturnType<typeof shown>>, want: Expected, cell: Pane): void {
    const ctx = `${JSON.stringify(s)} vs ${JSON.stringify(want)}`;
    expect(shownNumber(s.value), ctx).toBe(want.sessions);
    expect(closeTo(shownNumber(s.errors), (100 * want.errorSessions) / want.sessions), ctx).toBe(true);
    const [lo, hi] = want.p50;
    const p50 = shownDuration(s.p50.replace(/^duration p50 /, ""));
    expect(p50 >= lo && p50 <= hi, `${ctx}: p50 ${p50} outside [${lo}, ${hi}]`).toBe(true);
    // The bias and delays the cell's pane carries, exactly as the page writes them; the bias is
    // measured (the session-count shortfall).
    expect(cell.bias.countPct, ctx).not.toBeNull();
    expect(cell.bias.windows, ctx).toBeGreaterThan(0);
    expect(s.bias, ctx).toBe(
      expectedBias(-(cell.bias.countPct as number), "%", cell.bias.windows, biasExtras(cell.bias, "countPct")),
    );
    expect(s.delay, ctx).toBe(expectedDelay(cell.emitDelayMs, cell.pipelineLagMs));
  }

  it("shows the newest window's session count, error-session share and duration p50, and switches policy", async () => {
    const dashboard = expected.get("dashboard") as Expected;
    const billing = expected.get("billing") as Expected;
    expect(dashboard.sessions).toBeGreaterThan(1);
    expect(billing.sessions).toBeGreaterThan(0);
    await page.goto(`${url}/?services=${SERVICE}&window=60s&range=15m`);
    await page.getByTestId("panel-sessions").getByTestId("kind").waitFor();
    await page.getByTestId("connection").filter({ hasText: "Streaming" }).waitFor();
    expectShown(await shown(), dashboard, await cellOf("dashboard", dashboard.start));

    await page.getByTestId("panel-sessions").getByTestId("policy").selectOption("billing");
    await waitFor(
      async () => {
        const s = await shown();
        return (
          s.value !== "–" &&
          shownNumber(s.value) === billing.sessions &&
          closeTo(shownNumber(s.errors), (100 * billing.errorSessions) / billing.sessions)
        );
      },
      10_000,
      "the billing sessions in the Sessions headline",
    );
    expectShown(await shown(), billing, await cellOf("billing", billing.start));
    // The other panels keep their own policy.
    expect(await page.getByTestId("panel-requests").getByTestId("policy").inputValue()).toBe("dashboard");
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-sessions-e2e.png"), fullPage: true });
  });
});
