/**
 * E7 — the partition experiment (the seed's E7; docs/semantics.md, "Watermarks"). The experiment
 * acts as ingest for 4 partitions: live events and a heartbeat each second to every partition. Then
 * one partition goes silent — its events are held back, as behind a network partition of the
 * service that writes it, while ingest's heartbeats keep reaching every partition — and later heals,
 * dumping the held-back events with their original ts and ingest_ts.
 *
 * The policies track event time (bounded out-of-orderness), so the minimum over partitions is what
 * the silent partition pins. Without idleness the watermark stalls for as long as the silence lasts
 * and no on-time pane fires (status names the partition holding it back); the backlog is then exact.
 * With idleness — a partition with no event for the idle timeout of log time leaves the minimum —
 * the watermark moves on after the timeout; the backlog's events are behind it and are late or
 * dropped, and counted (metrics, TM_LATE), never silently lost. Idleness is a function of log time,
 * so the timeline below is read by log time, not by the wall clock.
 */
import { headers, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import {
  HEARTBEAT_HEADER,
  encodeEventBatch,
  eventsSubject,
  partitionOf,
  type EngineStatusMessage,
  type TelemetryEvent,
} from "@tidemark/engine/protocol";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  readStream,
  scrape,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
} from "./engine-fixtures.js";
import { paneBodyLines } from "@tidemark/engine/nats";

export const E7_PARTITIONS = 4;
export const E7_SILENT = 2;
/** A 2 s window; "fast": bounded 500 ms, no grace; "slow": bounded 1 s, grace 3 s. */
export const E7_CONFIG = {
  partitionCount: E7_PARTITIONS,
  windows: ["2s"],
  referenceHorizon: "10s",
  policies: [
    {
      name: "fast",
      label: "fast: 0.5 s",
      watermark: { kind: "bounded", lag: "500ms" },
      grace: 0,
      mode: "accumulating",
    },
    {
      name: "slow",
      label: "slow: 1 s + 3 s",
      watermark: { kind: "bounded", lag: "1s" },
      grace: "3s",
      mode: "accumulating",
    },
  ],
};

export interface E7Options {
  natsUrl: string;
  idleTimeout: string;
  /** Wall ms: all speak until silenceAt, one partition is silent until healAt, run ends at endAt. */
  silenceAt?: number;
  healAt?: number;
  endAt?: number;
  log?: (line: string) => void;
}

export interface E7Sample {
  t: number;
  /** fast watermark minus the experiment's start (ms), null before the first. */
  watermark: number | null;
  logTime: number | null;
  heldBackBy: number | null;
  idle: boolean[];
  onTimePanes: number;
  droppedFast: number;
  droppedSlow: number;
  lateAcceptedSlow: number;
}

export interface E7Result {
  samples: E7Sample[];
  /** ingest_ts of the silent partition's last event before the silence (its idle clock starts there). */
  silentSinceTs: number;
  /** ingest_ts stamped on the heartbeats just before the backlog was published. */
  healTs: number;
  sent: number;
  heldBack: number;
  /** Events counted in the final fast panes (service level). */
  countedFast: number;
  droppedFast: number;
  lateRecordsFast: number;
  countedSlow: number;
  droppedSlow: number;
  lateRecordsSlow: number;
  /** The engine's /metrics just before the heal and at the end. */
  metricsBeforeHeal: string;
  /** The engine's /metrics once the last live input is processed (before the end-of-run heartbeat). */
  metricsAfterHeal: string;
  metricsAtEnd: string;
  /**
   * Log time of the end of the run: one closing event per partition with ts = ingest_ts = endTs moves
   * every event-time watermark past every window of the run (they are not counted in `sent`, and
   * their own windows are left out of the accounting).
   */
  endTs: number;
}

/** One service per partition, so each partition carries its own traffic. */
export function servicePerPartition(partitions: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.filter(Boolean).length < partitions; i++) {
    const name = `svc${i}`;
    const p = partitionOf(name, partitions);
    out[p] ??= name;
  }
  return out;
}

export async function runE7(opts: E7Options): Promise<E7Result> {
  const silenceAt = opts.silenceAt ?? 3_000;
  const healAt = opts.healAt ?? 8_000;
  const endAt = opts.endAt ?? 10_500;
  const log = opts.log ?? (() => undefined);
  const dir = tempDir("e7");
  const configFile = join(dir, "tidemark.config.json");
  writeFileSync(configFile, JSON.stringify(E7_CONFIG));
  const nc = await connectNats(opts.natsUrl);
  const engine = startEngine(opts.natsUrl, join(dir, "data"), [
    "--config",
    configFile,
    "--idle-timeout",
    opts.idleTimeout,
    "--status-every",
    "250ms",
  ]);
  try {
    await engine.ready;
    const js = jetstream(nc);
    const feed = new Feed(js, servicePerPartition(E7_PARTITIONS));
    const samples: E7Sample[] = [];
    let onTime = 0;
    const panes = nc.subscribe("tm.panes.fast.>", {
      // A message is a batch of panes, one JSON line each (docs/decisions/0012-batched-transport.md).
      callback: (_e, m) => {
        for (const line of paneBodyLines(m.data))
          if ((JSON.parse(line) as { kind: string }).kind === "on-time") onTime++;
      },
    });
    const start = Date.now();
    const status = nc.subscribe("tm.status", {
      callback: (_e, m) => {
        const s = m.json<EngineStatusMessage>();
        const fast = s.policies.find((p) => p.name === "fast");
        const slow = s.policies.find((p) => p.name === "slow");
        samples.push({
          t: s.wallTime - start,
          watermark: fast?.watermark == null ? null : fast.watermark - start,
          logTime: s.logTime,
          heldBackBy: s.heldBackBy,
          idle: s.partitions.map((p) => p.idle),
          onTimePanes: onTime,
          droppedFast: fast?.dropped ?? 0,
          droppedSlow: slow?.dropped ?? 0,
          lateAcceptedSlow: slow?.lateAccepted ?? 0,
        });
      },
    });
    log(`E7 (idle timeout ${opts.idleTimeout}): partition ${E7_SILENT} silent from ${silenceAt} ms to ${healAt} ms`);
    let lastBeat = -Infinity;
    let metricsBeforeHeal = "";
    for (let t = 0; t < endAt; t = Date.now() - start) {
      const silent = t >= silenceAt && t < healAt;
      if (silent && t >= healAt - 400 && metricsBeforeHeal === "") metricsBeforeHeal = await scrape(await engine.ready);
      if (t >= healAt && feed.heldBack.length > 0) await feed.heal(E7_SILENT);
      await feed.tick(silent ? E7_SILENT : -1);
      if (t - lastBeat >= 1000) {
        lastBeat = t;
        await feed.heartbeats(Date.now());
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    // End of the experiment: time moves past every window's horizon on every partition.
    const lastLive = Date.now();
    await feed.heartbeats(lastLive);
    await waitForStatus(nc, (st) => st.logTime !== null && st.logTime >= lastLive, 30_000, "the last live heartbeat");
    const metricsAfterHeal = await scrape(await engine.ready);
    const endTs = Date.now() + 20_000;
    await feed.close(endTs);
    // Every partition's closing event is in: both event-time watermarks are past the run's windows.
    const closed = (s: EngineStatusMessage): boolean =>
      s.policies.every((p) => p.watermark !== null && p.watermark >= endTs - 1000);
    await waitForStatus(nc, closed, 30_000, "the closing events moving both watermarks");
    await new Promise((r) => setTimeout(r, 300));
    panes.unsubscribe();
    status.unsubscribe();
    const metricsAtEnd = await scrape(await engine.ready);
    await stopGracefully(engine);
    const result = { ...(await account(nc, samples, feed)), metricsBeforeHeal, metricsAfterHeal, metricsAtEnd, endTs };
    for (const line of timeline(samples)) log(line);
    log(
      `sent ${result.sent} events (${result.heldBack} held back); fast: ${result.countedFast} counted + ${result.droppedFast} dropped ` +
        `(${result.lateRecordsFast} on TM_LATE); slow: ${result.countedSlow} counted + ${result.droppedSlow} dropped`,
    );
    return result;
  } catch (err) {
    // The engine's own log says why a wait timed out.
    (err as Error).message += `\nengine output (last 3000 chars):\n${engine.output().slice(-3000)}`;
    throw err;
  } finally {
    if (engine.child.exitCode === null) engine.child.kill("SIGKILL");
    await nc.close();
  }
}

async function account(
  nc: NatsConnection,
  samples: E7Sample[],
  feed: Feed,
): Promise<Omit<E7Result, "metricsBeforeHeal" | "metricsAfterHeal" | "metricsAtEnd" | "endTs">> {
  const last = lastPanes(dedupePanes(await readStream(nc, "TM_PANES")).values());
  const counted = (policy: string): number =>
    [...last.values()]
      .filter((p) => p.policy === policy && p.key.route === undefined && p.window.end <= feed.closedAt - 5000)
      .reduce((a, p) => a + p.value.count, 0);
  const late = (await readStream(nc, "TM_LATE")).map((b) => JSON.parse(b) as { policy: string });
  const final = samples.at(-1);
  return {
    samples,
    silentSinceTs: feed.silentSinceTs,
    healTs: feed.healTs,
    sent: feed.sent,
    heldBack: feed.heldBackTotal,
    countedFast: counted("fast"),
    droppedFast: final?.droppedFast ?? 0,
    lateRecordsFast: late.filter((r) => r.policy === "fast").length,
    countedSlow: counted("slow"),
    droppedSlow: final?.droppedSlow ?? 0,
    lateRecordsSlow: late.filter((r) => r.policy === "slow").length,
  };
}

export function timeline(samples: readonly E7Sample[]): string[] {
  const lines = [
    "  t(s)  log(s)  fast W(s)  heldBackBy  idle      on-time panes  dropped fast/slow  late accepted slow",
  ];
  const t0 = samples.find((s) => s.logTime !== null)?.logTime ?? 0;
  let lastT = -Infinity;
  for (const s of samples) {
    if (s.t - lastT < 500) continue;
    lastT = s.t;
    const w = s.watermark === null ? "-" : (s.watermark / 1000).toFixed(1);
    lines.push(
      `${(s.t / 1000).toFixed(1).padStart(6)}  ${(((s.logTime ?? t0) - t0) / 1000).toFixed(1).padStart(6)}  ` +
        `${w.padStart(9)}  ${String(s.heldBackBy ?? "-").padStart(10)}  ` +
        `${s.idle
          .map((i) => (i ? "I" : "."))
          .join("")
          .padEnd(8)}  ${String(s.onTimePanes).padStart(13)}  ` +
        `${`${s.droppedFast}/${s.droppedSlow}`.padStart(17)}  ${String(s.lateAcceptedSlow).padStart(18)}`,
    );
  }
  return lines;
}

/** The experiment's ingest: live batches per partition, heartbeats, a held-back backlog. */
class Feed {
  sent = 0;
  heldBackTotal = 0;
  heldBack: TelemetryEvent[] = [];
  silentSinceTs = -Infinity;
  healTs = -Infinity;
  closedAt = Infinity;
  private lastTs = 0;
  private n = 0;
  private readonly run = Date.now().toString(36);

  constructor(
    private readonly js: JetStreamClient,
    private readonly services: string[],
  ) {}

  async tick(silent: number): Promise<void> {
    for (let p = 0; p < this.services.length; p++) {
      const batch = Array.from({ length: 5 }, () => this.event(p));
      if (p === silent) {
        this.heldBack.push(...batch);
        this.heldBackTotal += batch.length;
      } else {
        await this.publish(p, batch);
        if (p === E7_SILENT && this.heldBackTotal === 0)
          this.silentSinceTs = Math.max(...batch.map((e) => e.ingest_ts));
      }
    }
  }

  async heal(p: number): Promise<void> {
    this.healTs = Math.max(this.lastTs, Date.now());
    await this.heartbeats(this.healTs);
    for (let i = 0; i < this.heldBack.length; i += 50) await this.publish(p, this.heldBack.slice(i, i + 50));
    this.heldBack = [];
  }

  /**
   * One closing event per partition at `ts` (not counted in `sent`), then a heartbeat a second later
   * on every partition: the merge releases items of equal log time in partition order, so each lane
   * must show something newer before the next lane's item at `ts` can go (docs/semantics.md,
   * "Input contract").
   */
  async close(ts: number): Promise<void> {
    this.closedAt = ts;
    for (let p = 0; p < this.services.length; p++) {
      const e = {
        ts,
        ingest_ts: ts,
        service: this.services[p] as string,
        route: "/",
        status: 200,
        latency_ms: 1,
        user: "",
      };
      await this.js.publish(eventsSubject(p), encodeEventBatch([e]), { msgID: `e7-${this.run}-${this.n++}` });
    }
    await this.heartbeats(ts + 1000);
  }

  /** A heartbeat to every partition, the silent one included: ingest still reaches it. */
  async heartbeats(ts: number): Promise<void> {
    for (let p = 0; p < this.services.length; p++) {
      const h = headers();
      h.set(HEARTBEAT_HEADER, String(ts));
      await this.js.publish(eventsSubject(p), "", { headers: h, msgID: `e7-${this.run}-${this.n++}` });
    }
  }

  private event(p: number): TelemetryEvent {
    const now = Math.max(this.lastTs, Date.now());
    this.lastTs = now;
    const i = this.sent + this.heldBackTotal;
    return {
      ts: now - (i % 7) * 40,
      ingest_ts: now,
      service: this.services[p] as string,
      route: "/",
      status: i % 10 === 0 ? 500 : 200,
      latency_ms: 10 + (i % 30),
      user: `u${i % 20}`,
    };
  }

  private async publish(p: number, events: TelemetryEvent[]): Promise<void> {
    await this.js.publish(eventsSubject(p), encodeEventBatch(events), { msgID: `e7-${this.run}-${this.n++}` });
    this.sent += events.length;
  }
}
