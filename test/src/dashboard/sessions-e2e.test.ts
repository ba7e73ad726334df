/**
 * Sessions end to end (docs/decisions/0009-session-windows.md, "Live path"): nats-server, `tidemark
 * engine --sessions`, `tidemark dashboard`, then `tidemark backfill` of a small recording with
 * users. The session panes the engine wrote to TM_PANES, applied here to an upsert table
 * (retractions delete), give per (policy, service) the sessions ending in each 60 s window; the
 * dashboard's REST view and the browser's Sessions panel must show exactly that count and
 * error-session share for the newest window, a duration p50 among the middle durations, and follow
 * the panel's policy switch.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Pane } from "@tidemark/engine/protocol";
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
import { biasExtras, closeTo, expectedBias, expectedDelay, shownDuration, shownNumber } from "./shown-text.js";

const W = 60_000;
const SERVICE = "api";

interface Expected {
  start: number;
  sessions: number;
  errorSessions: number;
  durations: number[];
}

/** The newest 60 s window of the service's sessions (by end) under `policy`, from the pane stream. */
function expectedNewest(panes: Iterable<Pane>, policy: string): Expected {
  const rows = new Map<string, Pane>();
  for (const p of [...panes]
    .filter((x) => x.policy === policy && x.session && x.key.service === SERVICE)
    .sort((a, b) => a.seq - b.seq)) {
    if (p.kind === "retract") rows.delete(p.id);
    else rows.set(p.id, p);
  }
  const byWindow = new Map<number, Pane[]>();
  for (const p of rows.values()) {
    const start = Math.floor(p.window.end / W) * W;
    byWindow.set(start, [...(byWindow.get(start) ?? []), p]);
  }
  const start = Math.max(...byWindow.keys());
  const list = byWindow.get(start) ?? [];
  // Accumulating and final-only panes carry whole values (no discarding policy here).
  return {
    start,
    sessions: list.length,
    errorSessions: list.filter((p) => p.value.errors > 0).length,
    durations: list.map((p) => p.session?.durationMs ?? NaN).sort((a, b) => a - b),
  };
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
    for (const policy of ["dashboard", "billing"]) {
      const want = expectedNewest(panes, policy);
      expected.set(policy, want);
      // The dashboard has folded the engine's session panes once its REST view holds the same count.
      await waitFor(
        async () => {
          const res = await fetch(`${url}/api/sessions?policy=${policy}&window=60s&service=${SERVICE}`);
          const { panes: held } = (await res.json()) as { panes: Pane[] };
          const cell = held.find((p) => p.window.start === want.start);
          return cell !== undefined && cell.value.count === want.sessions && cell.value.errors === want.errorSessions;
        },
        15_000,
        `the dashboard to count ${want.sessions} ${policy} sessions of ${SERVICE} ending at ${want.start}`,
      );
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

  /** The dashboard's derived cell of the window (REST), whose bias and delays the headline shows. */
  const cellOf = async (policy: string, start: number): Promise<Pane> => {
    const res = await fetch(`${url}/api/sessions?policy=${policy}&window=60s&service=${SERVICE}`);
    const cell = ((await res.json()) as { panes: Pane[] }).panes.find((p) => p.window.start === start);
    if (!cell) throw new Error(`no ${policy} session cell of ${SERVICE} at ${start}`);
    return cell;
  };

  function expectShown(s: Awaited<ReturnType<typeof shown>>, want: Expected, cell: Pane): void {
    const ctx = `${JSON.stringify(s)} vs ${JSON.stringify({ ...want, durations: want.durations.length })}`;
    expect(shownNumber(s.value), ctx).toBe(want.sessions);
    expect(closeTo(shownNumber(s.errors), (100 * want.errorSessions) / want.sessions), ctx).toBe(true);
    // DDSketch (1 % relative accuracy) answers within the order statistics around the median.
    const n = want.durations.length;
    const mid = Math.round(0.5 * (n - 1));
    const lo = (want.durations[Math.max(0, mid - 1)] ?? 0) * 0.99 - 500;
    const hi = (want.durations[Math.min(n - 1, mid + 1)] ?? 0) * 1.01 + 500;
    const p50 = shownDuration(s.p50.replace(/^duration p50 /, ""));
    expect(p50 >= lo && p50 <= hi, `${ctx}: p50 ${p50} outside [${lo}, ${hi}]`).toBe(true);
    // The bias and delays the dashboard's cell carries (the session pane that last changed it),
    // exactly as the page writes them; the bias is measured (the session-count shortfall).
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
