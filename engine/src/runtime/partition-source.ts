/**
 * The source of one owned partition: an ordered consumer of TM_EVENTS filtered to
 * `tm.events.<p>`, started at the checkpointed sequence + 1 (the engine owns its offsets; there
 * is no server-side ack state). Event batches (compact or NDJSON, docs/decisions/0012-batched-transport.md)
 * are decoded from the message bytes; heartbeats (header `Tm-Heartbeat`, empty body) are passed on
 * with their time. When the consumer fails (the server restarted,
 * the connection dropped) it is created again from the last sequence seen + 1.
 */
import { DeliverPolicy, type ConsumerMessages, type JetStreamClient } from "@nats-io/jetstream";
import {
  HEARTBEAT_HEADER,
  STREAM_EVENTS,
  decodeEventBatch,
  eventsSubject,
  isCompactEventBatch,
  type TelemetryEvent,
} from "../protocol.js";

export interface PartitionSourceHandlers {
  /** One message, in stream order: events, or null with the heartbeat time. */
  message(seq: number, events: TelemetryEvent[] | null, heartbeatTs: number): void;
  /** A promise to wait on before reading further (backpressure), or undefined. */
  backpressure(): Promise<void> | undefined;
  /** A message that could not be decoded (skipped) or a consumer failure (retried). */
  problem(what: string, err: unknown): void;
}

const RETRY_MS = 500;

export class PartitionSource {
  private lastSeq: number;
  private stopped = false;
  private restarting = false;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly js: JetStreamClient,
    readonly partition: number,
    /** Sequence of the last message already accounted for (0: read from the beginning). */
    fromSeq: number,
    private readonly on: PartitionSourceHandlers,
  ) {
    this.lastSeq = fromSeq;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Drops the current consumer and creates a new one from the last sequence seen + 1. */
  restart(): void {
    this.restarting = true;
    void this.messages?.close().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.messages?.close().catch(() => undefined);
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.consumeOnce();
      } catch (err) {
        if (this.stopped) return;
        this.on.problem(
          `consumer of partition ${this.partition} failed; recreating it from sequence ${this.lastSeq + 1}`,
          err,
        );
      }
      if (!this.stopped && !this.restarting) await new Promise((r) => setTimeout(r, RETRY_MS));
      this.restarting = false;
    }
  }

  /**
   * The batch's well-formed events; a malformed batch or event is reported and skipped, never fed
   * to the core. A compact batch that decodes holds only well-formed events (its decoder checks).
   */
  private decode(seq: number, body: Uint8Array): TelemetryEvent[] {
    let events: TelemetryEvent[];
    try {
      events = decodeEventBatch(body);
    } catch (err) {
      this.on.problem(`partition ${this.partition} seq ${seq}: undecodable event batch; skipped`, err);
      return [];
    }
    if (isCompactEventBatch(body) || events.every(wellFormed)) return events;
    const kept = events.filter(wellFormed);
    this.on.problem(
      `partition ${this.partition} seq ${seq}: ${events.length - kept.length} malformed events skipped`,
      undefined,
    );
    return kept;
  }

  private async recreateWhenSilent(messages: ConsumerMessages): Promise<void> {
    for await (const s of messages.status()) {
      if (s.type !== "heartbeats_missed") continue;
      this.on.problem(
        `consumer of partition ${this.partition} missed its heartbeats; recreating it from sequence ${this.lastSeq + 1}`,
        undefined,
      );
      await messages.close().catch(() => undefined);
      return;
    }
  }

  private async consumeOnce(): Promise<void> {
    const from = this.lastSeq + 1;
    const consumer = await this.js.consumers.get(STREAM_EVENTS, {
      filter_subjects: eventsSubject(this.partition),
      ...(from > 1
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }
        : { deliver_policy: DeliverPolicy.All }),
    });
    // Short pulls, so a consumer whose server died shows as missed heartbeats within ~2 s; the
    // ordered consumer would keep pulling from it forever, so it is recreated (a NATS cluster
    // node lost: docs/operations.md, "Running past one machine"; test/src/cluster).
    const messages = await consumer.consume({ max_messages: 128, expires: 2000 });
    void this.recreateWhenSilent(messages);
    this.messages = messages;
    if (this.stopped) {
      // Stopped while the consumer was being created: close it without waiting, since its close
      // resolves only once iterated, and nothing will iterate it now.
      void messages.close().catch(() => undefined);
      return;
    }
    for await (const m of messages) {
      if (m.seq <= this.lastSeq) continue;
      this.lastSeq = m.seq;
      const hb = m.headers?.get(HEARTBEAT_HEADER);
      if (hb !== undefined && hb !== "") {
        const ts = Number(hb);
        if (Number.isFinite(ts)) this.on.message(m.seq, null, ts);
        else
          this.on.problem(
            `partition ${this.partition} seq ${m.seq}: heartbeat "${hb}" is not a time in ms; skipped`,
            undefined,
          );
      } else {
        this.on.message(m.seq, this.decode(m.seq, m.data), 0);
      }
      const wait = this.on.backpressure();
      if (wait) await wait;
      if (this.stopped) break;
    }
  }
}

function wellFormed(e: TelemetryEvent): boolean {
  return (
    typeof e === "object" &&
    e !== null &&
    Number.isFinite(e.ts) &&
    Number.isFinite(e.ingest_ts) &&
    typeof e.service === "string" &&
    typeof e.route === "string" &&
    Number.isFinite(e.status) &&
    Number.isFinite(e.latency_ms) &&
    typeof e.user === "string"
  );
}
