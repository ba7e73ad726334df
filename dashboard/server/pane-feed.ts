import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import {
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type Consumer,
  type ConsumerMessages,
  type JsMsg,
} from "@nats-io/jetstream";
import { STREAM_PANES, SUBJECT_STATUS, type EngineStatusMessage, type Pane } from "@tidemark/engine/protocol";
import { natsConnectOptions } from "@tidemark/engine/nats";
import type { Logger } from "pino";
import type { DashboardConfig } from "./config.js";
import type { FeedStatus } from "../protocol/ws-frames.js";
import { readPaneBody, type BodyPanes } from "./pane-body-read.js";
import { within } from "./within.js";

export interface FeedSink {
  /** A pane, decoded once; `json` is its text when the body held it (NDJSON), else written when first sent (pane-store.ts). */
  pane(pane: Pane, json: string | undefined): void;
  status(msg: EngineStatusMessage): void;
  feedChanged(feed: FeedStatus): void;
  /** A message whose body does not decode, or a line of one that is not a pane, was skipped (logged too). */
  skipped?(what: "body" | "line"): void;
}

export interface PaneFeed {
  status(): FeedStatus;
  close(): Promise<void>;
}

/** A pull's lifetime: the consumer's idle heartbeats come at half of it. */
const PULL_EXPIRES_MS = 2000;
/** How long a shutdown step (the connection's close, the run loop's end) may take before close() goes on. */
const CLOSE_WAIT_MS = 2000;

/**
 * Reads TM_PANES (replaying the last `replayMs` by publish time, then live; each message a batch
 * of panes, docs/decisions/0012-batched-transport.md) and core NATS `tm.status`. Never fails on a
 * missing stream or an unreachable server: it waits, retries and reports the state
 * ("waiting-for-stream", "disconnected") so the app can show it.
 */
export function startPaneFeed(
  config: DashboardConfig,
  log: Logger,
  sink: FeedSink,
  now: () => number = Date.now,
): PaneFeed {
  const feed = new PaneFeedLoop(config, log, sink, now);
  feed.start();
  return feed;
}

class PaneFeedLoop implements PaneFeed {
  private readonly feed: FeedStatus = { state: "connecting", applied: 0, replayTarget: null, lastSeq: 0, error: null };
  private closed = false;
  private nc: NatsConnection | undefined;
  private messages: ConsumerMessages | undefined;
  private statusSub: Subscription | undefined;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: DashboardConfig,
    private readonly log: Logger,
    private readonly sink: FeedSink,
    private readonly now: () => number,
  ) {}

  start(): void {
    this.done = this.run().catch((err: Error) => {
      if (this.closed) return;
      this.log.error({ err: err.message }, "pane feed stopped");
      this.set({ state: "disconnected", error: err.message });
    });
  }

  status(): FeedStatus {
    return { ...this.feed };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.statusSub?.unsubscribe();
    // A consumer's close resolves only once its messages are iterated (the engine's source hit
    // the same hang): do not wait on it; closing the connection ends it. The connection's close
    // and the run loop each get a bounded wait, so shutting the dashboard down never hangs (seen
    // in CI under load: > 10 s, with the feed retrying a missing TM_PANES every 200 ms).
    void this.messages?.close().catch(() => undefined);
    if (
      !(await within(
        CLOSE_WAIT_MS,
        this.nc?.close().catch(() => undefined),
      ))
    )
      this.log.warn({ waitedMs: CLOSE_WAIT_MS }, "NATS connection did not close in time; shutting down anyway");
    await within(CLOSE_WAIT_MS, this.done);
  }

  /** Connect, follow the connection and tm.status, then consume TM_PANES until closed. */
  private async run(): Promise<void> {
    const nc = await this.connect();
    if (nc === undefined) return;
    void this.followConnection(nc);
    this.statusSub = this.subscribeStatus(nc);
    // Failed attempts in a row: each is logged (the state line is logged only when the state changes,
    // so a feed failing again and again in one state would otherwise be silent).
    let failed = 0;
    while (!this.closed) {
      try {
        await this.consumeOnce(nc);
        failed = 0;
      } catch (err) {
        if (this.closed) break;
        const state = this.feed.state === "disconnected" ? "disconnected" : "waiting-for-stream";
        this.set({ state, error: (err as Error).message });
        this.log.warn(
          { attempt: ++failed, err: (err as Error).message, retryMs: this.config.retryMs },
          "TM_PANES consumer could not be opened or read; retrying",
        );
        await sleep(this.config.retryMs);
      }
    }
  }

  /** Retries until connected (then the client reconnects by itself) or closed. */
  private async connect(): Promise<NatsConnection | undefined> {
    const { config } = this;
    while (!this.closed && !this.nc) {
      try {
        this.nc = await connect({
          ...connectOptions(config),
          noAsyncTraces: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: config.retryMs,
        });
      } catch (err) {
        const error = `cannot reach NATS at ${config.nats} (${(err as Error).message}); retrying`;
        this.set({ state: "disconnected", error });
        await sleep(config.retryMs);
      }
    }
    if (this.closed) {
      await this.nc?.close();
      return undefined;
    }
    return this.nc;
  }

  private subscribeStatus(nc: NatsConnection): Subscription {
    return nc.subscribe(SUBJECT_STATUS, {
      callback: (err, msg) => {
        if (err) return;
        try {
          this.sink.status(msg.json<EngineStatusMessage>());
        } catch (e) {
          this.log.warn({ err: (e as Error).message }, "skipping a tm.status message that is not JSON");
        }
      },
    });
  }

  /** One consumer's life: from the last sequence applied (or the replay start) until it ends. */
  private async consumeOnce(nc: NatsConnection): Promise<void> {
    const consumer = await this.openConsumer(nc);
    if (consumer === undefined) return;
    // Short pulls, so a consumer whose server died shows as missed heartbeats within ~2 s; the
    // ordered consumer would keep pulling from it forever (ADR 0008, "A lost node must not stall a
    // partition"), so it is closed and the loop recreates it from the last sequence applied.
    const current = await consumer.consume({ expires: PULL_EXPIRES_MS });
    this.messages = current;
    void this.closeWhenSilent(current);
    for await (const m of current) this.onPane(m);
  }

  /** The consumer to read next, or undefined (after a wait) while TM_PANES does not exist. */
  private async openConsumer(nc: NatsConnection): Promise<Consumer | undefined> {
    const info = await (await jetstreamManager(nc)).streams.info(STREAM_PANES).catch((err: Error) => {
      if (/not found/i.test(err.message)) return undefined;
      throw err;
    });
    if (!info) {
      if (this.feed.state !== "waiting-for-stream")
        this.set({ state: "waiting-for-stream", error: `stream ${STREAM_PANES} does not exist yet` });
      await sleep(this.config.retryMs);
      return undefined;
    }
    const startSeq = this.feed.lastSeq > 0 ? this.feed.lastSeq + 1 : 0;
    const replayFrom = new Date(this.now() - this.config.replayMs).toISOString();
    const consumer = await jetstream(nc).consumers.get(
      STREAM_PANES,
      startSeq > 0
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq }
        : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: replayFrom },
    );
    const pending = (await consumer.info()).num_pending;
    this.set({ state: pending === 0 ? "live" : "replaying", replayTarget: info.state.last_seq, error: null });
    return consumer;
  }

  private async closeWhenSilent(current: ConsumerMessages): Promise<void> {
    for await (const s of current.status()) {
      if (s.type !== "heartbeats_missed") continue;
      this.log.warn(
        { lastSeq: this.feed.lastSeq },
        "TM_PANES consumer missed its heartbeats; recreating it from the last sequence applied",
      );
      await current.close().catch(() => undefined);
      return;
    }
  }

  private async followConnection(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === "disconnect")
        this.set({ state: "disconnected", error: `lost NATS at ${this.config.nats}; reconnecting` });
      else if (s.type === "reconnect") {
        this.set({ state: "connecting", error: null });
        // Start a fresh consumer from the last sequence seen rather than wait for the old one's heartbeat to expire.
        void this.messages?.close();
      }
    }
  }

  /** A TM_PANES message: a batch of panes, binary or one JSON per line, gzip-compressed or not (docs/protocol.md, "Pane bodies"). */
  private onPane(m: JsMsg): void {
    if (m.seq <= this.feed.lastSeq) return;
    this.feed.lastSeq = m.seq;
    const body = this.read(m);
    for (const why of body.rejected) {
      this.log.warn({ seq: m.seq, subject: m.subject, err: why }, "skipping a TM_PANES line that is not a pane");
      this.sink.skipped?.("line");
    }
    for (const { pane, json } of body.panes) {
      this.feed.applied++;
      this.sink.pane(pane, json);
    }
    if (this.feed.state === "replaying" && (m.info.pending === 0 || m.seq >= (this.feed.replayTarget ?? 0)))
      this.set({ state: "live" });
  }

  /** The panes of a message; none, logged, when its body does not decode (docs/protocol.md, "Versions"). */
  private read(m: JsMsg): BodyPanes {
    try {
      return readPaneBody(m.data);
    } catch (err) {
      this.log.warn(
        { seq: m.seq, subject: m.subject, err: (err as Error).message },
        "skipping a TM_PANES message whose body does not decode",
      );
      this.sink.skipped?.("body");
      return { panes: [], rejected: [] };
    }
  }

  private set(patch: Partial<FeedStatus>): void {
    const before = this.feed.state;
    Object.assign(this.feed, patch);
    if (patch.state && patch.state !== before)
      this.log.info({ feed: this.feed.state, error: this.feed.error }, "pane feed state");
    this.sink.feedChanged(this.feed);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Servers and credentials, the way every tidemark role reaches NATS. */
function connectOptions(config: DashboardConfig) {
  return natsConnectOptions(config.nats, {
    TIDEMARK_NATS_USER: config.natsUser ?? undefined,
    TIDEMARK_NATS_PASSWORD: config.natsPassword ?? undefined,
    TIDEMARK_NATS_TOKEN: config.natsToken ?? undefined,
  });
}
