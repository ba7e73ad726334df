/**
 * An early false alarm withdrawn end to end (docs/operations.md, "Alerts"; docs/decisions/0014-alerts.md):
 * raw events on a log clock the test drives → a real `tidemark engine` (the alerting policy: lag
 * 10 s, early panes every 5 s of log time, retracting) → TM_PANES → the dashboard server's rule →
 * a real Alertmanager. The window's first requests fail 30 %: its early pane crosses the rule and
 * the alert fires; its later requests arrive after the last early tick and before the watermark
 * passes the window, so only the on-time pane holds them, retracts the early value and the alert.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig, startDashboard, type AlertsView, type DashboardServer } from "@tidemark/dashboard";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import {
  connectNats,
  dedupePanes,
  readStream,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
} from "../engine/engine-fixtures.js";
import { LogFeed } from "../engine/log-feed.js";
import { resolvedNotification, startAlertmanager, type TestAlertmanager } from "./alertmanager.js";

const W = 10_000;
const PARTITIONS = 8;
const RULE = {
  alert: "HighErrorRate",
  expr: 'tidemark_error_ratio{policy="alerting", window="10s", route=""} > 0.05',
};
/** A window a few minutes back, so its log times are in the past like real ones; a multiple of 10 s. */
const S = Math.floor(Date.now() / W) * W - 5 * 60_000;

/** `n` requests of `service` at ingest_ts `t`, ts spread over the window [S, S + W), the first `errors` failing. */
function requests(service: string, t: number, n: number, errors: number): TelemetryEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    ts: S + Math.min(t - S, W - 1) - (i % 50),
    ingest_ts: t,
    service,
    route: "/search",
    status: i < errors ? 503 : 200,
    latency_ms: 20 + (i % 30),
    user: `u${i}`,
  }));
}

describe("an early alert retracted from the engine's own panes", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let engine: CliProcess;
  let dash: DashboardServer;
  let am: TestAlertmanager;
  let feed: LogFeed;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    am = await startAlertmanager();
    engine = startEngine(nats.url, tempDir("retraction-e2e"), ["--idle-timeout", "1h", "--status-every", "100ms"]);
    await engine.ready;
    dash = await startDashboard(
      resolveConfig({
        logLevel: "warn",
        retryMs: "100ms",
        port: 0,
        nats: nats.url,
        alerts: { alertmanagers: [am.url], resendEvery: "2s", rules: [RULE] },
      }),
    );
    feed = new LogFeed(() => nc, PARTITIONS);
  });
  afterAll(async () => {
    await dash?.close();
    if (engine) await stopGracefully(engine);
    await am?.stop();
    await nc?.close();
    await nats?.stop();
  });

  /** Log time to `t` on every partition, and the engine there. */
  async function clockTo(t: number): Promise<void> {
    await feed.heartbeat(t);
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= t, 30_000, `the engine at log time +${t - S} ms`);
  }
  const activeIn = async (service: string) =>
    (await am.alerts()).filter((a) => a.labels["alertname"] === "HighErrorRate" && a.labels["service"] === service);
  const searchPanes = async (): Promise<Pane[]> =>
    [...dedupePanes(await readStream(nc, "TM_PANES")).values()]
      .filter((p) => p.policy === "alerting" && p.key.service === "search" && p.key.route === undefined)
      .filter((p) => p.window.start === S && p.window.end === S + W)
      .sort((a, b) => a.seq - b.seq);

  it("fires on the early pane, retracts at the on-time pane, and Alertmanager shows it resolved with the reason", async () => {
    // 20 requests, 6 failing, early in the window; the early tick at S + 5 s shows them (0.3 > 0.05).
    await feed.put(S + 100, requests("search", S + 100, 20, 6), "first");
    await clockTo(S + 5_000);
    await waitFor(async () => (await activeIn("search")).length === 1, 20_000, "search's early alert in Alertmanager");
    expect((await activeIn("search"))[0]?.annotations["pane_kind"]).toBe("early");
    const early = (await searchPanes()).filter((p) => p.kind === "early");
    expect(early.map((p) => [p.value.count, p.value.errors])).toEqual([[20, 6]]);

    // 200 succeeding requests of the same window arrive at S + 19 s: after the last early tick
    // (S + 15 s, before they are placed) and on time (W = S + 9 s < end).
    await clockTo(S + 15_000);
    await feed.put(S + 19_000, requests("search", S + 19_000, 200, 0), "second");
    // W reaches the window's end: the on-time pane has all 220 (6 failing, 0.027).
    await clockTo(S + 20_000);
    await waitFor(async () => (await activeIn("search")).length === 0, 20_000, "search's alert to be retracted");
    const n = await resolvedNotification(am, "search", "the resolved notification of the retracted alert");
    expect(n?.annotations["retracted"]).toMatch(
      /^retracted: raised on the early pane of the window ending .* \(0\.3 > 0\.05\); the on-time pane of the window ending .* shows 0\.0\d+, which does not cross it$/,
    );
    expect(am.notified.filter((x) => x.labels["service"] === "search").map((x) => x.status)).toEqual([
      "firing",
      "resolved",
    ]);

    // What the engine published of the window, from the raw events: the early value, its
    // retraction, then the on-time pane with every request.
    const panes = await searchPanes();
    expect(panes.map((p) => [p.kind, p.value.count, p.value.errors])).toEqual([
      ["early", 20, 6],
      ["retract", 20, 6],
      ["on-time", 220, 6],
    ]);
    const view = (await (await fetch(`${dash.url}/api/alerts`)).json()) as AlertsView;
    expect(view.history.filter((h) => h.service === "search").map((h) => h.event)).toEqual(["retracted", "fired"]);
    expect(view.active.filter((a) => a.service === "search")).toEqual([]);
  });
});
