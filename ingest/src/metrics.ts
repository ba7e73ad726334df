/** The ingest role's Prometheus metrics (served at /metrics), on a registry of its own. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { RecordBatch } from "./events/record-batch.js";

export interface IngestMetrics {
  readonly registry: Registry;
  readonly accepted: Counter<"endpoint">;
  readonly rejected: Counter<"endpoint" | "reason">;
  readonly clamped: Counter<"reason">;
  readonly skippedSpans: Counter;
  readonly skippedLogRecords: Counter;
  /** OTLP/gRPC calls, by method and gRPC status code. */
  readonly grpcCalls: Histogram<"method" | "code">;
  readonly requests: Histogram<"endpoint" | "status">;
  readonly publishLatency: Histogram;
  readonly batchEvents: Histogram;
  readonly inFlightBytes: Gauge;
  readonly heartbeatFailures: Counter;
  /** Requests refused by a limit (docs/security.md, "Ingest limits"), by limit. */
  readonly limited: Counter<"limit">;
  readonly idempotencyConflicts: Counter;
  readonly idempotencyKeysEvicted: Counter;
  readonly idempotencyKeys: Gauge;
  /** Bodies handed to a parse worker (docs/ingest.md, "Parsing off the event loop"). */
  readonly parseOffloaded: Counter;
  readonly parseQueued: Gauge;
  readonly parseBusy: Gauge;
}

/** What the parse pool reports: bodies waiting for a worker, workers parsing. */
export interface ParseGauges {
  queued(): number;
  busy(): number;
}

export function createIngestMetrics(
  inFlight: () => number,
  idempotencyKeys: () => number = () => 0,
  parse: ParseGauges = { queued: () => 0, busy: () => 0 },
): IngestMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tidemark_ingest_" });
  // The nodejs_active_*_total sums are gauges named like counters (promtool check metrics warns, docs/operations.md,
  // "Metrics"): dropped; the per-type nodejs_active_* gauges they sum stay.
  for (const what of ["handles", "requests", "resources"])
    registry.removeSingleMetric(`tidemark_ingest_nodejs_active_${what}_total`);
  const registers = [registry];
  return {
    registry,
    accepted: new Counter({
      name: "tidemark_ingest_events_accepted_total",
      help: "Events stored in TM_EVENTS",
      labelNames: ["endpoint"],
      registers,
    }),
    rejected: new Counter({
      name: "tidemark_ingest_events_rejected_total",
      help: "Records refused with a per-record error, by reason (invalid, too_old)",
      labelNames: ["endpoint", "reason"],
      registers,
    }),
    clamped: new Counter({
      name: "tidemark_ingest_events_clamped_total",
      help: "Events whose ts was clamped, by reason",
      labelNames: ["reason"],
      registers,
    }),
    skippedSpans: new Counter({
      name: "tidemark_ingest_spans_skipped_total",
      help: "OTLP spans neither server nor root (not events)",
      registers,
    }),
    skippedLogRecords: new Counter({
      name: "tidemark_ingest_log_records_skipped_total",
      help: "OTLP log records without an HTTP status (not events)",
      registers,
    }),
    grpcCalls: new Histogram({
      name: "tidemark_ingest_grpc_call_duration_seconds",
      help: "OTLP/gRPC Export call duration, by method (traces, logs) and gRPC status code",
      labelNames: ["method", "code"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    requests: new Histogram({
      name: "tidemark_ingest_request_duration_seconds",
      help: "Write request duration, by endpoint and HTTP status",
      labelNames: ["endpoint", "status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    publishLatency: new Histogram({
      name: "tidemark_ingest_publish_latency_seconds",
      help: "From first publish to the last JetStream ack of a request",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    }),
    batchEvents: new Histogram({
      name: "tidemark_ingest_batch_events",
      help: "Events per TM_EVENTS message (one partition of one request)",
      buckets: [1, 10, 50, 100, 250, 500, 1000, 5000, 20000, 100000],
      registers,
    }),
    inFlightBytes: new Gauge({
      name: "tidemark_ingest_in_flight_bytes",
      help: "Request body bytes held now",
      registers,
      collect() {
        this.set(inFlight());
      },
    }),
    heartbeatFailures: new Counter({
      name: "tidemark_ingest_heartbeat_failures_total",
      help: "Heartbeat rounds that failed",
      registers,
    }),
    limited: new Counter({
      name: "tidemark_ingest_limited_total",
      help: "Write requests refused by a limit: rate and concurrency per token (429), body idle (408), parse queue full (503)",
      labelNames: ["limit"],
      registers,
    }),
    idempotencyConflicts: new Counter({
      name: "tidemark_ingest_idempotency_conflicts_total",
      help: "Write requests refused with 409: a key reused with another body within the deduplication window",
      registers,
    }),
    idempotencyKeysEvicted: new Counter({
      name: "tidemark_ingest_idempotency_keys_evicted_total",
      help: "Idempotency keys forgotten before the deduplication window ended (maxIdempotencyKeys reached)",
      registers,
    }),
    idempotencyKeys: new Gauge({
      name: "tidemark_ingest_idempotency_keys",
      help: "Idempotency keys remembered now",
      registers,
      collect() {
        this.set(idempotencyKeys());
      },
    }),
    parseOffloaded: new Counter({
      name: "tidemark_ingest_parse_offloaded_total",
      help: "Request bodies parsed by a parse worker, off the event loop (those of at least parseOffloadBytes)",
      registers,
    }),
    parseQueued: new Gauge({
      name: "tidemark_ingest_parse_queue_depth",
      help: "Request bodies waiting for a parse worker now (at most maxQueuedParses)",
      registers,
      collect() {
        this.set(parse.queued());
      },
    }),
    parseBusy: new Gauge({
      name: "tidemark_ingest_parse_workers_busy",
      help: "Parse workers parsing a body now",
      registers,
      collect() {
        this.set(parse.busy());
      },
    }),
  };
}

/** Counts one request's outcome: accepted, rejected by reason, clamped. */
export function countBatch(metrics: IngestMetrics, endpoint: "events" | "traces" | "logs", batch: RecordBatch): void {
  metrics.accepted.inc({ endpoint }, batch.events.length);
  metrics.rejected.inc({ endpoint, reason: "invalid" }, batch.rejectedBy.invalid);
  metrics.rejected.inc({ endpoint, reason: "too_old" }, batch.rejectedBy.too_old);
  metrics.clamped.inc({ reason: "future_skew" }, batch.clamped);
}

/** Counts an OTLP request's outcome and the records that are not events (spans neither server nor root, logs without a status). */
export function countOtlp(
  metrics: IngestMetrics,
  signal: "traces" | "logs",
  batch: RecordBatch,
  skipped: number,
): void {
  countBatch(metrics, signal, batch);
  (signal === "traces" ? metrics.skippedSpans : metrics.skippedLogRecords).inc(skipped);
}
