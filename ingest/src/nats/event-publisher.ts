/**
 * Publishes one request's events to TM_EVENTS: one NDJSON batch message per partition touched
 * (ADR 0002), `Nats-Msg-Id` = `<request id>:<partition>` so a client retry is deduplicated, and
 * resolves only after every JetStream ack. Any failure is a 503: nothing is acknowledged that
 * JetStream has not stored.
 */
import { encodeEventBatch, eventsSubject, partitionOf, type TelemetryEvent } from "@tidemark/engine/protocol";
import { IngestError } from "../errors.js";
import type { IngestMetrics } from "../metrics.js";
import type { NatsLink } from "./nats-link.js";

const PARTITION_CACHE_LIMIT = 10_000;

export class EventPublisher {
  /** service → partition; bounded, cleared when full (services are few, hashing is cheap). */
  private readonly partitionCache = new Map<string, number>();

  constructor(
    private readonly link: NatsLink,
    private readonly partitions: number,
    private readonly ackTimeoutMs: number,
    private readonly metrics: IngestMetrics,
  ) {}

  partitionOf(service: string): number {
    let p = this.partitionCache.get(service);
    if (p === undefined) {
      if (this.partitionCache.size >= PARTITION_CACHE_LIMIT) this.partitionCache.clear();
      p = partitionOf(service, this.partitions);
      this.partitionCache.set(service, p);
    }
    return p;
  }

  /** Groups by partition and starts every publish synchronously (so per-connection order = stamp order). */
  async publish(requestId: string, events: readonly TelemetryEvent[]): Promise<void> {
    if (!this.link.isConnected) throw unavailable("NATS is not connected");
    const groups: TelemetryEvent[][] = new Array(this.partitions);
    for (const e of events) (groups[this.partitionOf(e.service)] ??= []).push(e);
    const acks: Promise<unknown>[] = [];
    const started = process.hrtime.bigint();
    for (let p = 0; p < this.partitions; p++) {
      const group = groups[p];
      if (!group) continue;
      this.metrics.batchEvents.observe(group.length);
      acks.push(this.link.js.publish(eventsSubject(p), encodeEventBatch(group), { msgID: `${requestId}:${p}`, timeout: this.ackTimeoutMs }));
    }
    const results = await Promise.allSettled(acks);
    this.metrics.publishLatency.observe(Number(process.hrtime.bigint() - started) / 1e9);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw unavailable(`JetStream did not acknowledge the batch (${(failed.reason as Error).message})`);
  }
}

function unavailable(why: string): IngestError {
  return new IngestError("TM_INGEST_UNAVAILABLE", `${why}: nothing was acknowledged; retry with the same Idempotency-Key after Retry-After`);
}
