/**
 * The ingest role's NATS connection: connects (reconnecting forever afterwards), makes sure
 * TM_EVENTS exists as docs/decisions/0005-ingest.md, "Streams", says (creating it if missing,
 * refusing a mismatching one), and tracks readiness: connected and stream present. After a
 * reconnect the stream is checked again.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, eventsStreamSpec, InboxAcks, natsConnectOptions } from "@tidemark/engine/nats";
import type { Logger } from "pino";

export class NatsLink {
  private connected = true;
  private streamReady = true;
  private recheck: Promise<void> | undefined;
  private constructor(
    readonly nc: NatsConnection,
    /** TM_EVENTS publishes and their acks, through one inbox subscription (no request object per publish). */
    readonly acks: InboxAcks,
    private readonly log: Logger,
  ) {}

  /** Connects and ensures TM_EVENTS; throws (e.g. TM_STREAM_MISMATCH) when that fails. */
  static async open(url: string, log: Logger): Promise<NatsLink> {
    const nc = await connect({
      ...natsConnectOptions(url),
      noAsyncTraces: true,
      name: "tidemark-ingest",
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    try {
      await ensureStream(await jetstreamManager(nc), eventsStreamSpec());
    } catch (err) {
      await nc.close();
      throw err;
    }
    const link = new NatsLink(nc, new InboxAcks(nc), log);
    void link.watch();
    return link;
  }

  /** NATS connected and TM_EVENTS present: what /readyz reports. */
  get ready(): boolean {
    return this.connected && this.streamReady;
  }

  get isConnected(): boolean {
    return this.connected;
  }

  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === "disconnect") {
        this.connected = false;
        this.log.warn({ server: s.server }, "NATS disconnected: answering 503 until it returns");
      } else if (s.type === "reconnect") {
        this.connected = true;
        this.log.info({ server: s.server }, "NATS reconnected");
        this.recheckStream("reconnect");
      }
    }
  }

  /**
   * Checks TM_EVENTS again (creating it if missing, as at start): after a reconnect, or when a
   * publish failed while connected (e.g. the stream was deleted). One check at a time.
   */
  recheckStream(why: string): void {
    this.recheck ??= (async () => {
      this.streamReady = false;
      let failed = false;
      try {
        const outcome = await ensureStream(await jetstreamManager(this.nc), eventsStreamSpec());
        this.streamReady = true;
        if (outcome === "created") this.log.warn({ why }, "TM_EVENTS was missing and has been created again");
      } catch (err) {
        failed = true;
        this.log.error({ err, why }, "TM_EVENTS check failed; /readyz fails until a retry in 1 s succeeds");
      } finally {
        this.recheck = undefined;
      }
      // Writes answer 503 while not ready and so never trigger a check themselves: retry (e.g. a
      // cluster electing a new stream leader after a node died: docs/operations.md,
      // "Running past one machine").
      if (failed && !this.nc.isClosed()) setTimeout(() => this.recheckStream(why), 1000).unref();
    })();
  }

  /** Drains the connection; a publish still waiting for its ack then fails ("closed"). */
  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
    this.acks.close();
  }
}
