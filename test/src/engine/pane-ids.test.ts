/**
 * docs/semantics.md, "Pane ids and the key encoding", from a real engine: a pane's id is
 * `<policy>|<key>|<windowSizeMs>|<start>`, the key `encodeURIComponent(service)` at service level and
 * `encodeURIComponent(service)/encodeURIComponent(route)` at route level, so neither part holds `|`
 * or `/`, and the empty route (`svc/`) differs from the service (`svc`). Services and routes full of
 * the separators are backfilled into a real nats-server; the ids the engine publishes on TM_PANES
 * are checked against the rule, written out here independently of the core.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { startTestNats, type TestNats } from "../index.js";
import {
  connectNats,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

const SERVICES = ["checkout", "a|b/c d", "ünï%2F"];
const ROUTES = ["/cart", "", "/x|y/z", "GET /p?q=1#f"];
const START = 1_700_000_000_000;

const events: TelemetryEvent[] = Array.from({ length: 240 }, (_, i) => ({
  ts: START + i * 100 - 500,
  ingest_ts: START + i * 100,
  service: SERVICES[i % SERVICES.length] as string,
  route: ROUTES[Math.floor(i / SERVICES.length) % ROUTES.length] as string,
  status: i % 9 === 0 ? 500 : 200,
  latency_ms: 10 + (i % 40),
  user: `u${i % 7}`,
}));

describe("pane ids from a real engine", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let panes: Pane[];

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    const dir = tempDir("pane-ids");
    const engine = startEngine(nats.url, dir);
    await engine.ready;
    const summary = await runBackfill(nats.url, writeRecording(dir, events));
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "the end of the recording");
    await stopGracefully(engine);
    panes = (await readStream(nc, "TM_PANES")).map((b) => JSON.parse(b) as Pane);
  }, 120_000);
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  const expectedId = (p: Pane): string => {
    const service = encodeURIComponent(p.key.service);
    const key = p.key.route === undefined ? service : `${service}/${encodeURIComponent(p.key.route)}`;
    return `${p.policy}|${key}|${p.window.end - p.window.start}|${p.window.start}`;
  };

  it("writes <policy>|<key>|<windowSizeMs>|<start> with both key parts URI-escaped", () => {
    expect(panes.length).toBeGreaterThan(100);
    expect(panes.filter((p) => p.id !== expectedId(p)).map((p) => [p.id, expectedId(p)])).toEqual([]);
    for (const p of panes) {
      const parts = p.id.split("|");
      expect(parts, p.id).toHaveLength(4);
      expect((parts[1] as string).split("/").length - 1, p.id).toBe(p.key.route === undefined ? 0 : 1);
    }
  });

  it("has a route-level series for every (service, route) seen, the empty route apart from the service", () => {
    const keys = (policy: string, size: number): string[] =>
      [
        ...new Set(
          panes
            .filter((p) => p.policy === policy && p.window.end - p.window.start === size)
            .map((p) => p.id.split("|")[1] as string),
        ),
      ].sort();
    const serviceKeys = SERVICES.map((s) => encodeURIComponent(s));
    const routeKeys = SERVICES.flatMap((s) => ROUTES.map((r) => `${encodeURIComponent(s)}/${encodeURIComponent(r)}`));
    for (const policy of ["dashboard", "alerting", "billing"])
      for (const size of [10_000, 60_000])
        expect(keys(policy, size), `${policy} ${size}`).toEqual([...serviceKeys, ...routeKeys].sort());
    const empty = panes.find((p) => p.key.service === "checkout" && p.key.route === "");
    expect(empty?.id).toMatch(/^[a-z]+\|checkout\/\|\d+\|\d+$/);
    // Each pane's key names what it counts: a route pane's count is that route's events in its window.
    const billing = panes.filter(
      (p) => p.policy === "billing" && p.kind === "final" && p.window.end - p.window.start === 10_000,
    );
    for (const p of billing) {
      const count = events.filter(
        (e) =>
          e.service === p.key.service &&
          (p.key.route === undefined || e.route === p.key.route) &&
          e.ts >= p.window.start &&
          e.ts < p.window.end,
      ).length;
      expect(p.value.count, p.id).toBe(count);
    }
  });
});
