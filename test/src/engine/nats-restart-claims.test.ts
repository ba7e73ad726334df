/**
 * docs/operations.md, "Recovery", nats-server restarts: the worker reconnects, resends its
 * unacknowledged panes with the same message id, and while it is disconnected the log time stands
 * still, so no partition turns idle (idleness is judged in log time). A real engine process reads a
 * real nats-server through a protocol proxy (harness/nats-proxy.ts) that loses the engine's pane
 * publishes just before the server is stopped: only a resend can bring those panes to TM_PANES.
 * The run is compared with a clean run of the same log on a second nats-server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { EngineStatusMessage, Pane } from "@tidemark/engine/protocol";
import { startTestNats, waitFor, type TestNats } from "../index.js";
import { isPanePublish, isPanesAck, startNatsProxy } from "../harness/nats-proxy.js";
import type { CliProcess } from "../harness/processes.js";
import {
  dedupePanes,
  metricValue,
  normalized,
  readStream,
  scrape,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
} from "./engine-fixtures.js";
import { LogFeed } from "./log-feed.js";

const STEP_MS = 500;
const STEPS = 60;
const T0 = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000;
/** Past every default policy's grace and the 5 min reference horizon: every window closes. */
const END = T0 + STEPS * STEP_MS + 400_000;
const IDLE_TIMEOUT = "1s";
const OUTAGE_MS = 3_000;

interface Run {
  raw: string[];
  panes: Map<string, Pane>;
}

interface Outage extends Run {
  idleSamples: number[];
  acksLost: number;
  publishesLost: number;
  statusAfter: EngineStatusMessage;
}

describe("engine across a nats-server restart", () => {
  const servers: TestNats[] = [];
  const conns: NatsConnection[] = [];
  const engines: CliProcess[] = [];
  let clean: Run;
  let outage: Outage;

  beforeAll(async () => {
    clean = await cleanRun();
    outage = await outageRun();
  }, 180_000);
  afterAll(async () => {
    for (const e of engines) if (e.child.exitCode === null) e.child.kill("SIGKILL");
    for (const c of conns) await c.close().catch(() => undefined);
    for (const s of servers) await s.stop();
  });

  async function server(): Promise<{ nats: TestNats; nc: NatsConnection }> {
    const nats = await startTestNats();
    servers.push(nats);
    const nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    conns.push(nc);
    return { nats, nc };
  }

  function engine(url: string): CliProcess {
    const p = startEngine(url, tempDir("nats-restart"), [
      "--partition-count",
      "2",
      "--idle-timeout",
      IDLE_TIMEOUT,
      "--checkpoint-every",
      "1s",
    ]);
    engines.push(p);
    return p;
  }

  async function steps(feed: LogFeed, from: number, to: number): Promise<void> {
    for (let k = from; k <= to; k++) await feed.events(T0 + k * STEP_MS, 3);
  }

  async function reached(nc: NatsConnection, logTime: number): Promise<EngineStatusMessage> {
    return waitForStatus(nc, (s) => (s.logTime ?? -1) >= logTime, 60_000, `log time ${logTime}`);
  }

  async function finish(nc: NatsConnection, feed: LogFeed, p: CliProcess): Promise<Run> {
    await feed.heartbeat(END);
    await feed.heartbeat(END + 1);
    await reached(nc, END);
    // Bounded, so an engine that never gets its acks fails the comparison below instead of hanging.
    const stopped = await Promise.race([
      stopGracefully(p).then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 20_000)),
    ]);
    if (!stopped) p.child.kill("SIGKILL");
    const raw = await readStream(nc, "TM_PANES");
    return { raw, panes: dedupePanes(raw) };
  }

  async function cleanRun(): Promise<Run> {
    const { nats, nc } = await server();
    const p = engine(nats.url);
    await p.ready;
    const feed = new LogFeed(() => nc, 2);
    await steps(feed, 1, STEPS);
    return finish(nc, feed, p);
  }

  async function outageRun(): Promise<Outage> {
    const { nats, nc } = await server();
    const proxy = await startNatsProxy(nats.port);
    try {
      const p = engine(proxy.url);
      const ready = await p.ready;
      const feed = new LogFeed(() => nc, 2);
      await steps(feed, 1, 30);
      await reached(nc, T0 + 30 * STEP_MS);
      // Next 1.5 s of log time: panes stored, but their PubAcks lost on the way back (a resend is a duplicate).
      let acksLost = 0;
      proxy.toClient = (f) => (isPanesAck(f) ? (acksLost++, "drop") : "pass");
      await steps(feed, 31, 33);
      await reached(nc, T0 + 33 * STEP_MS);
      await waitFor(() => acksLost > 0, 10_000, "a PubAck of TM_PANES lost");
      proxy.toClient = () => "pass";
      // The 1.5 s after: the pane publishes themselves lost on their way to the server (only a resend stores them).
      let publishesLost = 0;
      proxy.toServer = (f) => (isPanePublish(f) ? (publishesLost++, "drop") : "pass");
      await steps(feed, 34, 36);
      await reached(nc, T0 + 36 * STEP_MS);
      await waitFor(() => publishesLost > 0, 10_000, "a pane publish lost");
      await nats.kill();
      proxy.toServer = () => "pass";
      // Cut off for three idle timeouts of wall clock; the engine's /metrics still answers.
      const idleSamples: number[] = [];
      const until = Date.now() + OUTAGE_MS;
      while (Date.now() < until) {
        const text = await scrape(ready);
        for (const partition of ["0", "1"])
          idleSamples.push(metricValue(text, "tidemark_engine_partition_idle", { partition }) ?? NaN);
        await new Promise((r) => setTimeout(r, 100));
      }
      await nats.start();
      await steps(feed, 37, STEPS);
      const statusAfter = await reached(nc, T0 + STEPS * STEP_MS - STEP_MS);
      return { ...(await finish(nc, feed, p)), idleSamples, acksLost, publishesLost, statusAfter };
    } finally {
      await proxy.close();
    }
  }

  it("turns no partition idle while it is cut off from NATS: log time stands still", () => {
    expect(outage.idleSamples.length).toBeGreaterThanOrEqual(20);
    expect(outage.idleSamples.every((v) => v === 0)).toBe(true);
    expect(outage.statusAfter.partitions.map((p) => p.idle)).toEqual([false, false]);
  });

  it("stores every pane of the clean run once: lost publishes are resent, resends are deduplicated", () => {
    expect(outage.acksLost).toBeGreaterThan(0);
    expect(outage.publishesLost).toBeGreaterThan(0);
    const missing = [...clean.panes.keys()].filter((k) => !outage.panes.has(k));
    const extra = [...outage.panes.keys()].filter((k) => !clean.panes.has(k));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    const differing = [...clean.panes].filter(([k, p]) => normalized(outage.panes.get(k) as Pane) !== normalized(p));
    expect(differing.map(([k]) => k)).toEqual([]);
    // TM_PANES's deduplication absorbed every resend: each (id, seq) is stored once, as in the clean run.
    expect(outage.raw.length).toBe(clean.raw.length);
    expect(outage.raw.length).toBe(outage.panes.size);
    expect(clean.panes.size).toBeGreaterThan(50);
  });
});
