import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import { STREAM_PANES, SUBJECT_STATUS, type EngineStatusMessage, type Pane } from "@tidemark/engine/protocol";
import { natsConnectOptions } from "@tidemark/engine/nats";
import type { Logger } from "pino";
import type { DashboardConfig } from "./config.js";
import type { FeedStatus } from "../protocol/ws-frames.js";

export interface FeedSink {
  pane(pane: Pane, json: string): void;
  status(msg: EngineStatusMessage): void;
  feedChanged(feed: FeedStatus): void;
}

export interface PaneFeed {
  status(): FeedStatus;
  close(): Promise<void>;
}

/** A pull's lifetime: the consumer's idle heartbeats come at half of it. */
const PULL_EXPIRES_MS = 2000;

/**
 * Reads TM_PANES (replaying the last `replayMs` by publish time, then live) and core NATS
 * `tm.status`. Never fails on a missing stream or an unreachable server: it waits, retries and
 * reports the state ("waiting-for-stream", "disconnected") so the app can show it.
 */
export function startPaneFeed(
  config: DashboardConfig,
  log: Logger,
  sink: FeedSink,
  now: () => number = Date.now,
): PaneFeed {
  const feed: FeedStatus = { state: "connecting", applied: 0, replayTarget: null, lastSeq: 0, error: null };
  let closed = false;
  let nc: NatsConnection | undefined;
  let messages: ConsumerMessages | undefined;
  let statusSub: Subscription | undefined;
  const set = (patch: Partial<FeedStatus>): void => {
    const before = feed.state;
    Object.assign(feed, patch);
    if (patch.state && patch.state !== before) log.info({ feed: feed.state, error: feed.error }, "pane feed state");
    sink.feedChanged(feed);
  };
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  const onPane = (m: JsMsg): void => {
    if (m.seq <= feed.lastSeq) return;
    feed.lastSeq = m.seq;
    const json = m.string();
    let pane: Pane;
    try {
      pane = parsePane(json);
    } catch (err) {
      log.warn(
        { seq: m.seq, subject: m.subject, err: (err as Error).message },
        "skipping a TM_PANES message that is not a pane",
      );
      return;
    }
    feed.applied++;
    sink.pane(pane, json);
    if (feed.state === "replaying" && (m.info.pending === 0 || m.seq >= (feed.replayTarget ?? 0)))
      set({ state: "live" });
  };

  const consumeOnce = async (conn: NatsConnection): Promise<void> => {
    const jsm = await jetstreamManager(conn);
    const info = await jsm.streams.info(STREAM_PANES).catch((err: Error) => {
      if (/not found/i.test(err.message)) return undefined;
      throw err;
    });
    if (!info) {
      if (feed.state !== "waiting-for-stream")
        set({ state: "waiting-for-stream", error: `stream ${STREAM_PANES} does not exist yet` });
      await sleep(config.retryMs);
      return;
    }
    const startSeq = feed.lastSeq > 0 ? feed.lastSeq + 1 : 0;
    const consumer = await jetstream(conn).consumers.get(
      STREAM_PANES,
      startSeq > 0
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq }
        : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(now() - config.replayMs).toISOString() },
    );
    const pending = (await consumer.info()).num_pending;
    set({ state: pending === 0 ? "live" : "replaying", replayTarget: info.state.last_seq, error: null });
    // Short pulls, so a consumer whose server died shows as missed heartbeats within ~2 s; the
    // ordered consumer would keep pulling from it forever (ADR 0008, "A lost node must not stall a
    // partition"), so it is closed and the loop recreates it from the last sequence applied.
    const current = await consumer.consume({ expires: PULL_EXPIRES_MS });
    messages = current;
    void closeWhenSilent(current);
    for await (const m of current) onPane(m);
  };

  const closeWhenSilent = async (current: ConsumerMessages): Promise<void> => {
    for await (const s of current.status()) {
      if (s.type !== "heartbeats_missed") continue;
      log.warn(
        { lastSeq: feed.lastSeq },
        "TM_PANES consumer missed its heartbeats; recreating it from the last sequence applied",
      );
      await current.close().catch(() => undefined);
      return;
    }
  };

  const run = async (): Promise<void> => {
    while (!closed && !nc) {
      try {
        nc = await connect({
          ...connectOptions(config),
          noAsyncTraces: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: config.retryMs,
        });
      } catch (err) {
        set({
          state: "disconnected",
          error: `cannot reach NATS at ${config.nats} (${(err as Error).message}); retrying`,
        });
        await sleep(config.retryMs);
      }
    }
    if (closed || !nc) return nc?.close();
    void watchConnection(nc);
    statusSub = nc.subscribe(SUBJECT_STATUS, {
      callback: (err, msg) => {
        if (err) return;
        try {
          sink.status(msg.json<EngineStatusMessage>());
        } catch (e) {
          log.warn({ err: (e as Error).message }, "skipping a tm.status message that is not JSON");
        }
      },
    });
    while (!closed) {
      try {
        await consumeOnce(nc);
      } catch (err) {
        if (closed) break;
        set({
          state: feed.state === "disconnected" ? "disconnected" : "waiting-for-stream",
          error: (err as Error).message,
        });
        await sleep(config.retryMs);
      }
    }
  };

  const watchConnection = async (conn: NatsConnection): Promise<void> => {
    for await (const s of conn.status()) {
      if (s.type === "disconnect") set({ state: "disconnected", error: `lost NATS at ${config.nats}; reconnecting` });
      else if (s.type === "reconnect") {
        set({ state: "connecting", error: null });
        // Start a fresh consumer from the last sequence seen rather than wait for the old one's heartbeat to expire.
        void messages?.close();
      }
    }
  };

  const done = run().catch((err: Error) => {
    if (!closed) {
      log.error({ err: err.message }, "pane feed stopped");
      set({ state: "disconnected", error: err.message });
    }
  });

  return {
    status: () => ({ ...feed }),
    async close() {
      closed = true;
      statusSub?.unsubscribe();
      // A consumer's close resolves only once its messages are iterated (the engine's source hit
      // the same hang): do not wait on it; closing the connection ends it. The run loop gets a
      // bounded wait, so shutting the dashboard down never hangs (seen once in CI: > 10 s).
      void messages?.close().catch(() => undefined);
      await nc?.close();
      await Promise.race([done, new Promise<void>((r) => setTimeout(r, 2000).unref())]);
    },
  };
}

/** Servers and credentials, the way every tidemark role reaches NATS. */
function connectOptions(config: DashboardConfig) {
  return natsConnectOptions(config.nats, {
    TIDEMARK_NATS_USER: config.natsUser ?? undefined,
    TIDEMARK_NATS_PASSWORD: config.natsPassword ?? undefined,
    TIDEMARK_NATS_TOKEN: config.natsToken ?? undefined,
  });
}

/** Parses a TM_PANES body, checking the fields the store relies on. */
export function parsePane(json: string): Pane {
  const p = JSON.parse(json) as Partial<Pane>;
  const ok =
    typeof p.id === "string" &&
    typeof p.seq === "number" &&
    typeof p.policy === "string" &&
    typeof p.key?.service === "string" &&
    typeof p.window?.start === "number" &&
    typeof p.window?.end === "number" &&
    typeof p.value === "object";
  if (!ok) throw new Error("missing id, seq, policy, key.service, window or value");
  return p as Pane;
}
