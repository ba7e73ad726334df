/**
 * The source of one owned partition: an ordered consumer of TM_EVENTS filtered to
 * `tm.events.<p>`, started at the checkpointed sequence + 1 (the engine owns its offsets; there
 * is no server-side ack state). Event batches (compact or NDJSON, docs/decisions/0012-batched-transport.md)
 * are decoded from the message bytes; heartbeats (header `Tm-Heartbeat`, empty body) are passed on
 * with their time. The consumer is an OrderedReader (ordered-reader.ts): recreated from the last
 * sequence seen + 1 when it fails.
 */
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import {
  arrayRows,
  HEARTBEAT_HEADER,
  STREAM_EVENTS,
  decodeCompactRows,
  decodeEventBatch,
  eventsSubject,
  isCompactEventBatch,
  type EventRows,
  type TelemetryEvent,
} from "../../protocol.js";
import { OrderedReader } from "./ordered-reader.js";

export interface PartitionSourceHandlers {
  /** One message, in stream order: its events as rows (made objects as they are read), or null with the heartbeat time. */
  message(seq: number, events: EventRows | null, heartbeatTs: number): void;
  /** A promise to wait on before reading further (backpressure), or undefined. */
  backpressure(): Promise<void> | undefined;
  /** A message that could not be decoded (skipped) or a consumer failure (retried). */
  problem(what: string, err: unknown): void;
}

export class PartitionSource {
  private readonly reader: OrderedReader;

  constructor(
    js: JetStreamClient,
    readonly partition: number,
    /** Sequence of the last message already accounted for (0: read from the beginning). */
    fromSeq: number,
    private readonly on: PartitionSourceHandlers,
  ) {
    this.reader = new OrderedReader(js, STREAM_EVENTS, eventsSubject(partition), `partition ${partition}`, fromSeq, {
      message: (m) => this.message(m),
      backpressure: () => on.backpressure(),
      problem: (what, err) => on.problem(what, err),
    });
  }

  start(): void {
    this.reader.start();
  }

  /** Drops the current consumer and creates a new one from the last sequence seen + 1. */
  restart(): void {
    this.reader.restart();
  }

  stop(): Promise<void> {
    return this.reader.stop();
  }

  private message(m: JsMsg): void {
    const hb = m.headers?.get(HEARTBEAT_HEADER);
    if (hb === undefined || hb === "") return this.on.message(m.seq, this.decode(m.seq, m.data), 0);
    const ts = Number(hb);
    if (Number.isFinite(ts)) this.on.message(m.seq, null, ts);
    else
      this.on.problem(
        `partition ${this.partition} seq ${m.seq}: heartbeat "${hb}" is not a time in ms; skipped`,
        undefined,
      );
  }

  /**
   * The batch's well-formed events; a malformed batch or event is reported and skipped, never fed
   * to the core. A compact batch that decodes holds only well-formed events (its decoder checks);
   * it stays columns until its events are released (docs/decisions/0055-events-as-rows.md).
   */
  private decode(seq: number, body: Uint8Array): EventRows {
    let events: TelemetryEvent[];
    try {
      if (isCompactEventBatch(body)) return decodeCompactRows(body);
      events = decodeEventBatch(body);
    } catch (err) {
      this.on.problem(`partition ${this.partition} seq ${seq}: undecodable event batch; skipped`, err);
      return arrayRows([]);
    }
    if (events.every(wellFormed)) return arrayRows(events);
    const kept = events.filter(wellFormed);
    this.on.problem(
      `partition ${this.partition} seq ${seq}: ${events.length - kept.length} malformed events skipped`,
      undefined,
    );
    return arrayRows(kept);
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
