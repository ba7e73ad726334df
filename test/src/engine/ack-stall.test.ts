/**
 * docs/decisions/0035-backpressure.md: a stalled TM_PANES shows as held input and growing lag that
 * recovers, never as memory. A real engine process reads a real nats-server through a protocol
 * proxy (harness/nats-proxy.ts) that holds back every PubAck TM_PANES (and TM_LATE, in the same
 * window) sends it for STALL_MS, while events keep arriving at ingest's pace (a backlog grows in
 * TM_EVENTS). During the stall the
 * engine's in-flight gauges stay within the bounds it was given, its resident memory stays under
 * RSS_BOUND_MB, its input-held counter grows, and each unacknowledged publish is sent again only
 * after timeouts doubling per attempt. After it the lag recovers, and TM_PANES holds every pane of a
 * clean run of the same log on a second nats-server, each (id, seq) once.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { EngineStatusMessage, Pane } from "@tidemark/engine/protocol";
import { startTestNats, waitFor, type TestNats } from "../index.js";
import { isPublisherAck, isPublisherPublish, startNatsProxy, type NatsProxy } from "../harness/nats-proxy.js";
import type { CliProcess } from "../harness/processes.js";
import {
  connectNats,
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

/** Early panes every 100 ms of log time on four subjects: every step publishes several pane batches. */
const CONFIG = {
  windows: ["1s", "10s"],
  referenceHorizon: "5s",
  policies: ["fast", "slow"].map((name, i) => ({
    name,
    label: `${name}: ${200 * (i + 1)} ms`,
    watermark: { kind: "arrival-lag", lag: `${200 * (i + 1)}ms` },
    grace: 0,
    earlyEvery: "100ms",
    mode: "accumulating",
  })),
};
const MAX_IN_FLIGHT = 64;
const MAX_IN_FLIGHT_BYTES = 1024 * 1024;
const FLAGS = [
  "--partition-count",
  "2",
  "--max-in-flight",
  String(MAX_IN_FLIGHT),
  "--max-in-flight-bytes",
  String(MAX_IN_FLIGHT_BYTES),
  "--max-queued-events",
  "2048",
  "--checkpoint-every",
  "1s",
  "--status-every",
  "250ms",
];
const STEP_MS = 100;
const EVENTS_PER_STEP = 20;
const STALL_MS = 16_000;
/** The engine runs at ~80 MB here, its window is 1 MiB and its input 2 × 2048 events: held, it stays near that. */
const RSS_BOUND_MB = 192;

interface Sample {
  at: number;
  rssMb: number;
  inFlight: number;
  inFlightBytes: number;
  heldSeconds: number;
  resends: number;
  /** The engine's longest event-loop delay since the previous scrape (prom-client resets it per scrape). */
  loopLagMs: number;
}

/** prom-client's and this test's event-loop delay sampling period: a delay can be this much longer than seen. */
const LOOP_RESOLUTION_MS = 10;

describe("engine under a TM_PANES acknowledgement stall", () => {
  const servers: TestNats[] = [];
  const conns: NatsConnection[] = [];
  const engines: CliProcess[] = [];
  let proxy: NatsProxy;
  /** The log times fed, in order: the clean run is fed the same. */
  const fed: number[] = [];
  let end = 0;
  const samples: Sample[] = [];
  /** Each pane or late publish (subject and message id), and the wall clock of every time it went to the server until the stall's release. */
  const sends = new Map<string, number[]>();
  let stallFrom = 0;
  let stallTo = 0;
  /** How late this process (the proxy) ran during the stall, ms: it sees a frame up to that late. */
  let proxyLateMs = 0;
  let backlogAtRelease = 0;
  let recoveredInMs = 0;
  let warmedInMs = 0;
  let emitted = 0;
  let stalled: { raw: string[]; panes: Map<string, Pane> };
  let clean: { raw: string[]; panes: Map<string, Pane> };

  beforeAll(async () => {
    const a = await server();
    proxy = await startNatsProxy(a.nats.port);
    // Every publish from the engine's first on: a message sent before the stall whose ack the stall
    // holds is sent again during it, and its first send is where its backoff starts.
    proxy.toServer = (f) => {
      if (isPublisherPublish(f) && stallTo === 0) {
        const id = `${f.line.split(" ")[1]} ${/Nats-Msg-Id: ([^\r]+)/.exec(f.payload.toString("latin1"))?.[1] ?? ""}`;
        sends.set(id, [...(sends.get(id) ?? []), Date.now()]);
      }
      return "pass";
    };
    const engine = spawn(proxy.url, "stalled");
    const ready = await engine.ready;
    const feed = new LogFeed(() => a.nc, 2);
    await stepsWhile(feed, () => fed.length < 30);
    // Warm: fed on at the same pace until the engine keeps up (a loaded machine can put a status
    // behind by more than a second), the baseline the recovery is measured against.
    warmedInMs = await caughtUp(a.nc, feed, Date.now());
    await stall(a.nc, feed, ready, engine.child.pid as number);
    recoveredInMs = await caughtUp(a.nc, feed, stallTo);
    end = (fed.at(-1) as number) + 60_000;
    stalled = await finish(a.nc, feed, engine, ready);
    clean = await cleanRun();
  }, 180_000);

  /**
   * PubAcks of TM_PANES and TM_LATE held back for STALL_MS while events keep coming; their publishes
   * watched. Both streams share the engine's one window (docs/decisions/0035-backpressure.md, "The
   * window") and every step here drops late records (ts up to 1.5 s before ingest_ts, grace 0): with
   * TM_LATE's acks let through, the window filled to 64 and then fell back as far as late publishes
   * were in it, held below 64 by the gate's hysteresis, and a scrape could miss the moment it was full.
   */
  async function stall(nc: NatsConnection, feed: LogFeed, ready: Record<string, unknown>, pid: number): Promise<void> {
    proxy.toClient = (f) => (isPublisherAck(f) ? "hold" : "pass");
    const lateness = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    lateness.enable();
    stallFrom = Date.now();
    const until = (): boolean => Date.now() < stallFrom + STALL_MS;
    await Promise.all([sample(ready, pid, until), stepsWhile(feed, until)]);
    lateness.disable();
    proxyLateMs = lateness.max / 1e6 + LOOP_RESOLUTION_MS;
    backlogAtRelease = await backlog(nc, feed);
    stallTo = Date.now();
    proxy.toClient = () => "pass";
    proxy.release();
  }

  /** Events go on at the same pace until the engine has caught up (its lag under a second); ms from `from`. */
  async function caughtUp(nc: NatsConnection, feed: LogFeed, from: number): Promise<number> {
    let caught = false;
    const lag = waitForStatus(nc, (s) => (s.pipelineLagMs ?? Infinity) < 1_000 && s.wallTime > from, 60_000, "lag");
    const done = (): boolean => (caught = true);
    void lag.then(done, done);
    await stepsWhile(feed, () => !caught);
    return (await lag).wallTime - from;
  }

  /** The same log, fed at once to a fresh engine on a second nats-server. */
  async function cleanRun(): Promise<{ raw: string[]; panes: Map<string, Pane> }> {
    const b = await server();
    const again = spawn(b.nats.url, "clean");
    await again.ready;
    const replay = new LogFeed(() => b.nc, 2);
    for (const t of fed) await replay.events(t, EVENTS_PER_STEP);
    return finish(b.nc, replay, again, undefined);
  }

  afterAll(async () => {
    for (const e of engines) if (e.child.exitCode === null) e.child.kill("SIGKILL");
    for (const c of conns) await c.close().catch(() => undefined);
    await proxy?.close();
    for (const s of servers) await s.stop();
  });

  async function server(): Promise<{ nats: TestNats; nc: NatsConnection }> {
    const nats = await startTestNats();
    servers.push(nats);
    const nc = await connectNats(nats.url);
    conns.push(nc);
    return { nats, nc };
  }

  function spawn(url: string, name: string): CliProcess {
    const dir = tempDir(`ack-stall-${name}`);
    const config = join(dir, "tidemark.config.json");
    writeFileSync(config, JSON.stringify(CONFIG));
    const p = startEngine(url, join(dir, "data"), ["--config", config, ...FLAGS]);
    engines.push(p);
    return p;
  }

  /** One step: EVENTS_PER_STEP events on each partition, stamped with the wall clock as ingest does. */
  async function step(feed: LogFeed): Promise<void> {
    const t = Math.max(Date.now(), (fed.at(-1) ?? 0) + 1);
    fed.push(t);
    await feed.events(t, EVENTS_PER_STEP);
  }

  /** Steps every STEP_MS while `go()`. */
  async function stepsWhile(feed: LogFeed, go: () => boolean): Promise<void> {
    while (go()) await paced(feed);
  }

  async function paced(feed: LogFeed): Promise<void> {
    const due = Date.now() + STEP_MS;
    await step(feed);
    const left = due - Date.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  }

  /** Metrics and RSS every 250 ms while `go()`. */
  async function sample(ready: Record<string, unknown>, pid: number, go: () => boolean): Promise<void> {
    while (go()) {
      const text = await scrape(ready);
      const stream = { stream: "TM_PANES" };
      samples.push({
        at: Date.now(),
        rssMb: rssMb(pid),
        inFlight: metricValue(text, "tidemark_engine_publish_in_flight_messages", stream) ?? NaN,
        inFlightBytes: metricValue(text, "tidemark_engine_publish_in_flight_bytes", stream) ?? NaN,
        heldSeconds: metricValue(text, "tidemark_engine_input_held_seconds_total") ?? NaN,
        resends: metricValue(text, "tidemark_engine_publish_resends_total", stream) ?? NaN,
        loopLagMs: (metricValue(text, "tidemark_engine_nodejs_eventloop_lag_max_seconds") ?? NaN) * 1000,
      });
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** To the end of every window; then every pane the engine emitted is stored, and it stops. */
  async function finish(
    nc: NatsConnection,
    feed: LogFeed,
    p: CliProcess,
    ready: Record<string, unknown> | undefined,
  ): Promise<{ raw: string[]; panes: Map<string, Pane> }> {
    await feed.heartbeat(end);
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= end, 60_000, "the end of the log");
    if (ready) {
      await waitFor(
        async () => {
          const text = await scrape(ready);
          emitted = [...text.matchAll(/^tidemark_engine_panes_emitted_total\{.*\} (\d+)$/gm)].reduce(
            (n, m) => n + Number(m[1]),
            0,
          );
          return metricValue(text, "tidemark_engine_publish_in_flight_messages", { stream: "TM_PANES" }) === 0;
        },
        30_000,
        "every pane acknowledged",
      );
    }
    await stopGracefully(p);
    const raw = await readStream(nc, "TM_PANES");
    return { raw, panes: dedupePanes(raw) };
  }

  it("keeps in flight within its bounds and memory under its bound while the input is held", () => {
    expect(samples.length, "samples taken during the stall").toBeGreaterThan(20);
    const peak = (k: keyof Sample): number => Math.max(...samples.map((s) => s[k]));
    const ctx = JSON.stringify(samples.filter((_, i) => i % 8 === 0));
    expect(peak("inFlight"), ctx).toBe(MAX_IN_FLIGHT);
    expect(peak("inFlightBytes"), ctx).toBeLessThanOrEqual(MAX_IN_FLIGHT_BYTES);
    expect(peak("rssMb"), ctx).toBeLessThan(RSS_BOUND_MB);
    // Nor does it creep up while the stall lasts and the backlog grows.
    expect(peak("rssMb") - (samples[0] as Sample).rssMb, ctx).toBeLessThan(48);
    // Held for most of the stall (the window filled within its first second), while a backlog grew.
    const held = (samples.at(-1) as Sample).heldSeconds - (samples[0] as Sample).heldSeconds;
    expect(held, ctx).toBeGreaterThan((STALL_MS / 1000) * 0.7);
    expect(backlogAtRelease, ctx).toBeGreaterThan(1_000);
  });

  it("sends each unacknowledged publish again after timeouts doubling per attempt, fewer as the stall goes on", () => {
    const resent = [...sends.values()].filter((times) => times.length > 1);
    expect(resent.length).toBeGreaterThanOrEqual(MAX_IN_FLIGHT / 2);
    // Seen at the proxy, a gap is short by as much as the earlier frame was late: written out after
    // the engine's loop was held up, or read in after the proxy's was (both measured, not assumed).
    const engineLateMs = Math.max(...samples.map((s) => s.loopLagMs)) + LOOP_RESOLUTION_MS;
    const slack = engineLateMs + proxyLateMs;
    for (const times of resent) {
      const gaps = times.slice(1).map((t, k) => t - (times[k] as number));
      const ctx = `${JSON.stringify(gaps)}; the engine up to ${engineLateMs} ms late, the proxy ${proxyLateMs} ms`;
      // Attempt k waits at least 2^k s (publish-backoff.ts), whatever the jitter drew.
      gaps.forEach((gap, k) => expect(gap, ctx).toBeGreaterThanOrEqual(1000 * 2 ** k - slack));
      const span = (times.at(-1) as number) - (times[0] as number);
      expect(times.length - 1, ctx).toBeLessThanOrEqual(Math.log2((span + slack) / 1000 + 1));
    }
    // The counter grows sub-linearly: the stall's second half resends fewer than its first.
    const half = stallFrom + STALL_MS / 2;
    const during = [...sends.values()].flatMap((times) => times.slice(1)).filter((t) => t >= stallFrom);
    const first = during.filter((t) => t < half).length;
    const second = during.filter((t) => t >= half).length;
    expect(second, `${first} then ${second}`).toBeLessThan(first);
    // The engine's counter, from the first sample (taken as the stall began) to the last, counts no
    // resend the proxy did not see go by (a resend is counted before it is written).
    const counted = (samples.at(-1) as Sample).resends - (samples[0] as Sample).resends;
    expect(counted).toBeLessThanOrEqual(during.length);
  });

  it("recovers its lag once the acknowledgements come, and stores every pane of a clean run once", () => {
    expect(warmedInMs, "the lag under a second before the stall, ms after the warm-up's steps").toBeLessThan(30_000);
    expect(recoveredInMs, "the lag under a second again, ms after the stall").toBeLessThan(30_000);
    const missing = [...clean.panes.keys()].filter((k) => !stalled.panes.has(k));
    const extra = [...stalled.panes.keys()].filter((k) => !clean.panes.has(k));
    expect({ missing: missing.slice(0, 10), extra: extra.slice(0, 10) }).toEqual({ missing: [], extra: [] });
    const differing = [...clean.panes].filter(([k, p]) => normalized(stalled.panes.get(k) as Pane) !== normalized(p));
    expect(differing.map(([k]) => k).slice(0, 10)).toEqual([]);
    // Each (id, seq) stored once: every resend was deduplicated, and the engine's own count agrees.
    expect(stalled.raw.length).toBe(stalled.panes.size);
    expect(stalled.raw.length).toBe(clean.raw.length);
    expect(emitted).toBe(stalled.raw.length);
    expect(clean.panes.size).toBeGreaterThan(500);
  });
});

/** Resident set of a process, MB (/proc/<pid>/status VmRSS). */
function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

/** Events stored in TM_EVENTS that the engine has not yet handed to its core. */
async function backlog(nc: NatsConnection, feed: LogFeed): Promise<number> {
  const s: EngineStatusMessage = await waitForStatus(nc, () => true, 10_000, "a status");
  return feed.sent - s.eventsTotal;
}
