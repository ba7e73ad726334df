/**
 * An explosion of users meets a counted bound, never memory (docs/semantics.md, "Session windows";
 * docs/decisions/0034-sessions-at-scale.md): 60,000 requests, each from a user of its own, through a
 * real `tidemark engine --sessions --session-max-keys 5000`. The first 5,000 (service, user) keys
 * are sessionized; every later event is counted (tm.status `sessions.overflowEvents`, the metric
 * `tidemark_engine_session_overflow_events_total`) and shown on the dashboard's health panel; the
 * engine's peak RSS stays small; billing's session cells hold exactly the 5,000 kept sessions; and
 * every event is still counted in the window panes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import type { Page } from "playwright-core";
import { spawnTidemark, startTestNats, type CliProcess, type TestNats } from "../index.js";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  metricValue,
  readStream,
  scrape,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
} from "../engine/engine-fixtures.js";
import { launchBrowser } from "../dashboard/browser.js";
import { publishBulk } from "../engine/bulk-feed.js";

const USERS = 60_000;
const CAP = 5_000;
const PARTITIONS = 8;
const SERVICES = ["api", "web", "auth"];
const T0 = Math.floor((Date.now() - 3_600_000) / 10_000) * 10_000;
const SPAN_MS = 4_000;
/** Past the reference horizon (5 min) and billing's lag + grace, after the sessions' 60 s gap. */
const END = T0 + SPAN_MS + 60_000 + 400_000;

describe("a session key cap", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let engine: CliProcess;
  let dash: CliProcess;
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    const dir = tempDir("session-cap");
    engine = startEngine(nats.url, join(dir, "data"), [
      ...["--partition-count", String(PARTITIONS), "--sessions", "on", "--session-max-keys", String(CAP)],
    ]);
    dash = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url]);
    await engine.ready;
    await dash.ready;
  });
  afterAll(async () => {
    await browser?.close();
    for (const p of [dash, engine]) if (p && p.child.exitCode === null) await stopGracefully(p);
    await nc?.close();
    await nats?.stop();
  });

  it("sessionizes the first keys, counts the rest, shows them on the health panel, keeps memory small", async () => {
    await publishBulk(nc, users(), { partitions: PARTITIONS, idPrefix: "cap", ends: [END, END + 1_000] });
    const status = await waitForStatus(
      nc,
      (s) => s.eventsTotal === USERS && (s.logTime ?? 0) >= END && s.sessions !== undefined,
      120_000,
      "every event processed",
    );
    expect(status.sessions?.maxKeys).toBe(CAP);
    expect(status.sessions?.overflowEvents).toBe(USERS - CAP);
    const metrics = await scrape(await engine.ready);
    expect(metricValue(metrics, "tidemark_engine_session_overflow_events_total")).toBe(USERS - CAP);
    expect(metricValue(metrics, "tidemark_engine_session_keys_limit")).toBe(CAP);
    const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${engine.child.pid as number}/status`, "utf8"));
    expect(Number(peak?.[1]) * 1024).toBeLessThan(300 * 1024 * 1024);

    browser = await launchBrowser();
    const page: Page = await browser.context.newPage();
    await page.goto(String((await dash.ready).dashboard));
    const overflow = page.getByTestId("panel-health").getByTestId("session-overflow");
    await overflow.waitFor({ timeout: 15_000 });
    expect(await overflow.textContent()).toBe(`${(USERS - CAP).toLocaleString("en-US")} events over the cap`);

    // Every kept key's session is in billing's final cells; every event in billing's windows.
    await stopGracefully(engine);
    const finals = [...lastPanes(dedupePanes(await readStream(nc, "TM_PANES")).values()).values()].filter(
      (p) => p.policy === "billing" && p.kind === "final" && p.window.end - p.window.start === 10_000,
    );
    const sessions = finals.filter((p) => p.sessions);
    expect(sessions.reduce((n, p) => n + p.value.count, 0)).toBe(CAP);
    const windows = finals.filter((p) => !p.sessions && p.key.route === undefined && p.key.service !== "*");
    expect(windows.reduce((n, p) => n + p.value.count, 0)).toBe(USERS);
  }, 180_000);
});

/** One request per user, all within SPAN_MS, then log time past every horizon. */
function* users(): Generator<TelemetryEvent> {
  for (let i = 0; i < USERS; i++) {
    const service = SERVICES[i % SERVICES.length] as string;
    const t = T0 + Math.floor((i * SPAN_MS) / USERS);
    yield { ts: t, ingest_ts: t, service, route: "/", status: 200, latency_ms: 5, user: `user-${i}` };
  }
}
