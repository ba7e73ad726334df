/**
 * Publishes one request's events to TM_EVENTS: one event batch message per partition touched, in
 * the compact encoding (docs/decisions/0012-batched-transport.md; NDJSON, ADR 0002, for a batch
 * with a string UTF-8 cannot carry), `Nats-Msg-Id` = `<request id>:<partition>` so a client retry is deduplicated, and
 * resolves only after every JetStream ack. Any failure is a 503: nothing is acknowledged that
 * JetStream has not stored.
 *
 * A partition's group larger than MAX_EVENTS_PER_MESSAGE events or the server's max_payload is
 * split by event position (ADR 0005): each part's id is `<request id>:<partition>:<offset of its
 * first event in the group>`, so a retry of the same body splits identically and dedupes.
 */
import {
  encodeEventBatchBody,
  eventsSubject,
  partitionOfEvent,
  type PartitionBy,
  type TelemetryEvent,
} from "@tidemark/engine/protocol";
import { IngestError } from "../errors.js";
import type { IngestMetrics } from "../metrics.js";
import type { NatsLink } from "./nats-link.js";

const PARTITION_CACHE_LIMIT = 10_000;
export const MAX_EVENTS_PER_MESSAGE = 1000;
/** Room left under max_payload for headers. */
const HEADER_ROOM = 1024;

export class EventPublisher {
  /** partition key (service, or service and route) → partition; bounded, cleared when full (hashing is cheap). */
  private readonly partitionCache = new Map<string, number>();

  constructor(
    private readonly link: NatsLink,
    private readonly partitions: number,
    /** What chooses a partition (docs/decisions/0032-partition-by-route.md). */
    private readonly partitionBy: PartitionBy,
    private readonly ackTimeoutMs: number,
    private readonly metrics: IngestMetrics,
    /** Called once a request's publishes are written, in the same synchronous step (punctuation.ts). */
    private readonly published: () => void = () => undefined,
  ) {}

  partitionOf(e: { service: string; route: string }): number {
    const key = this.partitionBy === "service" ? e.service : `${e.service}\u0000${e.route}`;
    let p = this.partitionCache.get(key);
    if (p === undefined) {
      if (this.partitionCache.size >= PARTITION_CACHE_LIMIT) this.partitionCache.clear();
      p = partitionOfEvent(e, this.partitions, this.partitionBy);
      this.partitionCache.set(key, p);
    }
    return p;
  }

  /** Groups by partition and starts every publish synchronously (so per-connection order = stamp order). */
  async publish(requestId: string, events: readonly TelemetryEvent[]): Promise<void> {
    if (!this.link.isConnected) throw unavailable("NATS is not connected");
    const groups: TelemetryEvent[][] = new Array(this.partitions);
    for (const e of events) (groups[this.partitionOf(e)] ??= []).push(e);
    const acks: Promise<unknown>[] = [];
    const started = process.hrtime.bigint();
    const maxBytes = (this.link.nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM;
    for (let p = 0; p < this.partitions; p++) {
      const group = groups[p];
      if (group) this.publishPart({ id: `${requestId}:${p}`, partition: p, group, maxBytes, acks }, 0, group.length);
    }
    this.published();
    const results = await Promise.allSettled(acks);
    this.metrics.publishLatency.observe(Number(process.hrtime.bigint() - started) / 1e9);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (!failed) return;
    if (this.link.isConnected) this.link.recheckStream("publish failed while connected");
    throw unavailable(`JetStream did not acknowledge the batch (${(failed.reason as Error).message})`);
  }

  /** Publishes part.group[from, to) as one message, or splits it until each message fits. */
  private publishPart(part: GroupPublish, from: number, to: number): void {
    const count = to - from;
    const whole = count === part.group.length;
    let body: Uint8Array | undefined;
    if (count <= MAX_EVENTS_PER_MESSAGE) {
      body = encodeEventBatchBody(whole ? part.group : part.group.slice(from, to));
      if (body.length > part.maxBytes && count > 1) body = undefined;
    }
    if (!body) {
      const size = count > MAX_EVENTS_PER_MESSAGE ? MAX_EVENTS_PER_MESSAGE : Math.ceil(count / 2);
      for (let at = from; at < to; at += size) this.publishPart(part, at, Math.min(at + size, to));
      return;
    }
    this.metrics.batchEvents.observe(count);
    const msgID = whole ? part.id : `${part.id}:${from}`;
    part.acks.push(this.link.acks.publish(eventsSubject(part.partition), body, { msgID, timeout: this.ackTimeoutMs }));
  }
}

/** One partition's events of one request, being published. */
interface GroupPublish {
  readonly id: string;
  readonly partition: number;
  readonly group: readonly TelemetryEvent[];
  readonly maxBytes: number;
  readonly acks: Promise<unknown>[];
}

function unavailable(why: string): IngestError {
  return new IngestError(
    "TM_INGEST_UNAVAILABLE",
    `${why}: nothing was acknowledged; retry with the same Idempotency-Key after Retry-After`,
  );
}
