import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { Registry } from "prom-client";
import { testPane } from "../../protocol/pane.fixture.js";
import { PaneSamples } from "../prom/pane-samples.js";
import { alertMetrics } from "./alert-metrics.js";
import type { PostableAlert } from "./alertmanager-target.js";
import { parseAlerts, scopeOf } from "./alerts-config.js";
import { startAlerting, type Alerting, type FlushTimers } from "./alerting.js";

const W = 10_000;
const RULE = { alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting", window="10s"} > 0.05' };

/** A loopback HTTP server standing in for an Alertmanager: records every request and alert posted to it. */
async function spy(): Promise<{
  server: Server;
  url: string;
  posted: PostableAlert[];
  requests: () => number;
  firstRequest: Promise<void>;
}> {
  const posted: PostableAlert[] = [];
  let requests = 0;
  let first: () => void = () => undefined;
  const firstRequest = new Promise<void>((r) => (first = r));
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (b: Buffer) => (body += b.toString("utf8")));
    req.on("end", () => {
      requests++;
      posted.push(...(JSON.parse(body) as PostableAlert[]));
      res.writeHead(200).end();
      first();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { server, url, posted, requests: () => requests, firstRequest };
}

/** Flush timers the test runs by hand: each burst is flushed when the test says so. */
function manualTimers(): FlushTimers & { runPending(): number } {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    setTimeout: (fn) => (pending.set(++next, fn), next),
    clearTimeout: (h) => void pending.delete(h as number),
    runPending() {
      const fns = [...pending.values()];
      pending.clear();
      for (const fn of fns) fn();
      return fns.length;
    },
  };
}

describe("alerting on the dashboard server: the replay rebuilds the state before anything is sent", () => {
  let alerting: Alerting | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    alerting?.close();
    await new Promise((r) => server?.close(r));
  });

  it("sends nothing during the replay; at live, what fires and the resolution, never a resolved alert as firing", async () => {
    const am = await spy();
    server = am.server;
    const config = parseAlerts({ alertmanagers: [am.url], rules: [RULE] }, scopeOf({}, "config"), "config");
    const samples = new PaneSamples({ windowsPerSeries: 100, maxWindows: 10_000, discardingPolicies: [] });
    const timers = manualTimers();
    alerting = startAlerting(
      config,
      "http://dash:3000",
      samples,
      alertMetrics(new Registry(), ["HighErrorRate"], [am.url]),
      pino({ level: "silent" }),
      timers,
    );
    const base = Math.floor(Date.now() / W) * W - 120_000;
    const offer = (service: string, n: number, errors: number, seq = 0) => {
      const p = testPane({ policy: "alerting", service, start: base + n * W, seq, count: 100, errors });
      samples.apply(p);
      alerting?.offer(p);
      // One flush per pane: the replay's bursts judged apart.
      expect(timers.runPending()).toBe(1);
    };
    offer("checkout", 0, 20);
    offer("checkout", 1, 1);
    offer("payments", 1, 30);
    expect(alerting.view().history.map((h) => [h.service, h.event])).toEqual([
      ["payments", "fired"],
      ["checkout", "resolved"],
      ["checkout", "fired"],
    ]);

    const before = Date.now();
    alerting.feedChanged("live");
    await am.firstRequest;
    // One request, the first after going live: nothing went out during the replay. It holds the
    // state at live: payments firing (endsAt ahead), checkout's resolution (endsAt passed).
    expect(am.requests()).toBe(1);
    const byService = (s: string) => am.posted.filter((a) => a.labels["service"] === s);
    expect(am.posted.length).toBe(2);
    expect(byService("payments").length).toBe(1);
    expect(Date.parse(byService("payments")[0]!.endsAt)).toBeGreaterThan(Date.now());
    expect(byService("checkout").length).toBe(1);
    expect(Date.parse(byService("checkout")[0]!.endsAt)).toBeLessThanOrEqual(before);
    expect(byService("checkout")[0]?.annotations["resolved"]).toMatch(/^resolved: the on-time pane/);
  });
});
