import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { Registry } from "prom-client";
import { testPane } from "../../protocol/pane.fixture.js";
import { PaneSamples } from "../prom/pane-samples.js";
import { alertMetrics } from "./alert-metrics.js";
import type { PostableAlert } from "./alertmanager-target.js";
import { parseAlerts, scopeOf } from "./alerts-config.js";
import { startAlerting, type Alerting } from "./alerting.js";

const W = 10_000;
const RULE = { alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting", window="10s"} > 0.05' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loopback HTTP server standing in for an Alertmanager: records every alert posted to it. */
async function spy(): Promise<{ server: Server; url: string; posted: PostableAlert[] }> {
  const posted: PostableAlert[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (b: Buffer) => (body += b.toString("utf8")));
    req.on("end", () => {
      posted.push(...(JSON.parse(body) as PostableAlert[]));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, posted };
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
    alerting = startAlerting(
      config,
      "http://dash:3000",
      samples,
      alertMetrics(new Registry(), ["HighErrorRate"], [am.url]),
      pino({ level: "silent" }),
    );
    const base = Math.floor(Date.now() / W) * W - 120_000;
    const offer = async (service: string, n: number, errors: number, seq = 0) => {
      const p = testPane({ policy: "alerting", service, start: base + n * W, seq, count: 100, errors });
      samples.apply(p);
      alerting?.offer(p);
      await sleep(60); // one flush per pane: the replay's bursts judged apart
    };
    await offer("checkout", 0, 20);
    await offer("checkout", 1, 1);
    await offer("payments", 1, 30);
    expect(alerting.view().history.map((h) => [h.service, h.event])).toEqual([
      ["payments", "fired"],
      ["checkout", "resolved"],
      ["checkout", "fired"],
    ]);
    await sleep(100);
    expect(am.posted).toEqual([]);

    alerting.feedChanged("live");
    await sleep(300);
    const now = Date.now();
    const byService = (s: string) => am.posted.filter((a) => a.labels["service"] === s);
    expect(byService("payments").length).toBeGreaterThan(0);
    expect(byService("payments").every((a) => Date.parse(a.endsAt) > now)).toBe(true);
    expect(byService("checkout").length).toBeGreaterThan(0);
    expect(byService("checkout").every((a) => Date.parse(a.endsAt) <= now)).toBe(true);
    expect(byService("checkout")[0]?.annotations["resolved"]).toMatch(/^resolved: the on-time pane/);
  });
});
