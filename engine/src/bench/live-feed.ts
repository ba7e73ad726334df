/**
 * The live load of the runtime benchmark's lag rows (runtime-lag.ts), in a worker thread so it
 * does not share the engine's event loop: it publishes to TM_EVENTS what ingest publishes
 * (docs/ingest.md, "What goes to NATS") — every `tickMs` a request's worth of fresh events per
 * 5000, stamped with the wall clock as `ingest_ts`, one compact batch per partition touched (split
 * above 1000 events), then a punctuation heartbeat to every partition at most every 100 ms, and
 * heartbeats each second. It emulates ingest rather than running it: the engine package does not
 * depend on ingest.
 */
import { parentPort, workerData } from "node:worker_threads";
import { connect, headers } from "@nats-io/transport-node";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import {
  HEARTBEAT_HEADER,
  encodeEventBatchBody,
  eventsSubject,
  partitionOf,
  type TelemetryEvent,
} from "../protocol.js";

export interface LiveFeedOptions {
  url: string;
  /** Events per second. */
  rate: number;
  durationMs: number;
  tickMs: number;
}

export interface LiveFeedResult {
  events: number;
  messages: number;
  heartbeats: number;
  /** Wall time the feed took (longer than asked when it could not keep the rate). */
  elapsedMs: number;
}

const PARTITIONS = 8;
const REQUEST_EVENTS = 5000;
const MESSAGE_EVENTS = 1000;
const PUNCTUATION_MS = 100;
const HEARTBEAT_MS = 1000;
const MAX_IN_FLIGHT = 512;

class Feed {
  private last = 0;
  private lastRound = -Infinity;
  private unpunctuated = false;
  private lastHeartbeat = -Infinity;
  private seq = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  readonly result: LiveFeedResult = { events: 0, messages: 0, heartbeats: 0, elapsedMs: 0 };

  constructor(private readonly js: JetStreamClient) {}

  /** A monotonic ingest_ts; `strict` gives one after every one before (a punctuation's). */
  private stamp(strict: boolean): number {
    const t = Date.now();
    this.last = t > this.last ? t : strict ? this.last + 1 : this.last;
    return this.last;
  }

  async request(n: number): Promise<void> {
    const ingestTs = this.stamp(false);
    const groups: TelemetryEvent[][] = Array.from({ length: PARTITIONS }, () => []);
    for (let i = 0; i < n; i++) {
      const s = this.seq++;
      const e: TelemetryEvent = {
        ts: ingestTs - 50 - (s % 1500),
        ingest_ts: ingestTs,
        service: `svc-${s % 20}`,
        route: `/route/${(s >> 5) % 20}`,
        status: s % 97 === 0 ? 503 : 200,
        latency_ms: 5 + (s % 300),
        user: `u${(s * 7919) % 20_000}`,
      };
      (groups[partitionOf(e.service, PARTITIONS)] as TelemetryEvent[]).push(e);
    }
    for (let p = 0; p < PARTITIONS; p++) {
      const g = groups[p] as TelemetryEvent[];
      for (let at = 0; at < g.length; at += MESSAGE_EVENTS)
        await this.publish(p, encodeEventBatchBody(g.slice(at, at + MESSAGE_EVENTS)), undefined);
    }
    this.result.events += n;
    this.unpunctuated = true;
    await this.punctuateIfDue(Date.now());
  }

  /** A punctuation round if events went out since the last and the interval has passed (or `force`). */
  async punctuateIfDue(now: number, force = false): Promise<void> {
    if (!this.unpunctuated || (!force && now - this.lastRound < PUNCTUATION_MS)) return;
    this.unpunctuated = false;
    this.lastRound = now;
    await this.heartbeats();
  }

  /** When a held-back round is due (Infinity when none is). */
  nextRoundAt(): number {
    return this.unpunctuated ? this.lastRound + PUNCTUATION_MS : Infinity;
  }

  async heartbeatIfDue(now: number): Promise<void> {
    if (now - this.lastHeartbeat < HEARTBEAT_MS) return;
    this.lastHeartbeat = now;
    await this.heartbeats();
  }

  private async heartbeats(): Promise<void> {
    const ts = this.stamp(true);
    for (let p = 0; p < PARTITIONS; p++) {
      await this.publish(p, undefined, ts);
      this.result.heartbeats++;
    }
  }

  private async publish(partition: number, body: Uint8Array | undefined, heartbeatTs: number | undefined) {
    const h = headers();
    if (heartbeatTs !== undefined) h.set(HEARTBEAT_HEADER, String(heartbeatTs));
    const p: Promise<unknown> = this.js
      .publish(eventsSubject(partition), body, { headers: h })
      .then(() => this.inFlight.delete(p));
    this.inFlight.add(p);
    this.result.messages++;
    if (this.inFlight.size >= MAX_IN_FLIGHT) await Promise.race(this.inFlight);
  }

  async settle(): Promise<void> {
    await Promise.all(this.inFlight);
  }
}

async function run(o: LiveFeedOptions): Promise<LiveFeedResult> {
  const nc = await connect({ servers: o.url, noAsyncTraces: true });
  const feed = new Feed(jetstream(nc));
  const start = Date.now();
  let sent = 0;
  for (let now = start; now - start < o.durationMs; now = Date.now()) {
    let due = Math.floor(((now - start) * o.rate) / 1000) - sent;
    while (due > 0) {
      const n = Math.min(REQUEST_EVENTS, due);
      await feed.request(n);
      sent += n;
      due -= n;
    }
    await feed.heartbeatIfDue(now);
    // Until the next tick; ingest sends a round held back by the interval once it has passed.
    for (let t = Date.now(); t < now + o.tickMs; t = Date.now()) {
      await new Promise((r) => setTimeout(r, Math.min(now + o.tickMs, feed.nextRoundAt()) - t));
      await feed.punctuateIfDue(Date.now());
    }
  }
  await feed.punctuateIfDue(Date.now(), true);
  await feed.settle();
  feed.result.elapsedMs = Date.now() - start;
  await nc.drain();
  return feed.result;
}

if (parentPort)
  void run(workerData as LiveFeedOptions).then(
    (r) => parentPort?.postMessage(r),
    (err: unknown) => {
      throw err;
    },
  );
