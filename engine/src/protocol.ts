/**
 * Wire types shared by every tidemark role (docs/architecture.md, "Packages and boundaries").
 *
 * This is the one module that ingest, engine and dashboard all import
 * (`@tidemark/engine/protocol`). It holds types, subject names and the
 * batch codecs (protocol/event-batch.ts, protocol/pane-batch.ts); nothing else is shared by copy.
 *
 * Pure: no node:* imports, no clock, no env.
 */

import type { TelemetryEvent } from "./protocol/telemetry-event.js";
import { fnv1a32 } from "./protocol/fnv1a.js";
import type { AgeBucket, BiasSpread, BiasStage, PaneBias } from "./protocol/pane-bias.js";

export type { TelemetryEvent };

/** True when the event counts as an error (docs/ingest.md, "`POST /v1/events`"). */
export function isError(status: number): boolean {
  return status >= 500;
}

/** NATS stream and subject names (docs/architecture.md, "Data flow"). */
export const STREAM_EVENTS = "TM_EVENTS";
export const STREAM_PANES = "TM_PANES";
export const STREAM_LATE = "TM_LATE";
/** Stage-1 partial aggregates for the merge stage (docs/decisions/0029-two-stage-dataflow.md). */
export const STREAM_PARTIALS = "TM_PARTIALS";
export const SUBJECT_STATUS = "tm.status";
export const HEARTBEAT_HEADER = "Tm-Heartbeat";
export const DEFAULT_PARTITIONS = 8;

export function eventsSubject(partition: number): string {
  return `tm.events.${partition}`;
}
export function panesSubject(policy: string, windowSizeMs: number): string {
  return `tm.panes.${policy}.${windowSizeMs}`;
}
/**
 * Session panes (docs/semantics.md, "Session windows"): their own subject, so a session gap never
 * collides with a window size.
 */
export function sessionPanesSubject(policy: string): string {
  return `tm.panes.${policy}.sessions`;
}
export function lateSubject(policy: string): string {
  return `tm.late.${policy}`;
}

/**
 * What chooses an event's partition (docs/decisions/0032-partition-by-route.md): its service (the
 * default: a service lives in one partition), or its service and route (a hot service spreads
 * over partitions; its service-level panes then come from the merge stage).
 */
export type PartitionBy = "service" | "service+route";
export const PARTITION_BY: readonly PartitionBy[] = ["service", "service+route"];

/** The partition of an event under `by`: `partitionOf` of its service, or of service, U+0000, route. */
export function partitionOfEvent(e: { service: string; route: string }, partitions: number, by: PartitionBy): number {
  return partitionOf(by === "service" ? e.service : `${e.service}\u0000${e.route}`, partitions);
}

/** Partition of a service: FNV-1a 32-bit of the UTF-16 code units, mod P (docs/ingest.md, "What goes to NATS"). */
export function partitionOf(service: string, partitions: number): number {
  return fnv1a32(service) % partitions;
}

export {
  COMPACT_BATCH_MAGIC,
  COMPACT_BATCH_VERSION,
  compactEncodable,
  decodeEventBatch,
  encodeCompactEventBatch,
  encodeEventBatch,
  encodeEventBatchBody,
  isCompactEventBatch,
} from "./protocol/event-batch.js";
export { arrayRows, CompactRows, decodeCompactRows, type EventRows } from "./protocol/event-rows.js";
export { encodePaneBatch, paneBatchLines } from "./protocol/pane-batch.js";
export { mergePartitionOf, splitByMergePartition } from "./protocol/merge-partitions.js";
export { JsonLines, type LineBuffers } from "./protocol/json-lines.js";
export { NO_BIAS, poolBias } from "./protocol/bias-pooling.js";
export { numberBytes, PANE_BODY_HEADER, PANE_BODY_MAGIC, PANE_BODY_VERSION } from "./protocol/pane-encoding.js";
export { PaneRecords } from "./protocol/pane-records.js";
export { isBinaryPaneBody, MAX_DEPTH, PaneBodyError, readPaneRecords } from "./protocol/pane-records-read.js";
export {
  ALL_SERVICES,
  decodePartialBatch,
  encodePartialBatch,
  PARTIAL_BATCH_VERSION,
  PARTIAL_TICK_MS,
  PartialBatchError,
  partialsSubject,
  type PartialBatch,
  type PartialDelta,
  type PartitionProgress,
} from "./protocol/partial-batch.js";
export {
  decodePartialMessage,
  encodePartialRun,
  isPartialRun,
  MAX_RUN_BATCHES,
  MAX_RUN_BYTES,
  PARTIAL_RUN_VERSION,
} from "./protocol/partial-run.js";

/** Kinds of pane (docs/semantics.md, "Policies are snapshot schedules"). */
export type PaneKind = "early" | "on-time" | "late" | "final" | "retract";

export interface PaneKey {
  service: string;
  route?: string;
  /** Session panes only: "*", all users of the service (docs/semantics.md, "Session windows"). */
  user?: string;
}

/** Session panes only: what a session cell holds beside the value (docs/semantics.md, "Session windows"). */
export interface PaneSessions {
  /** Events of the sessions counted (a discarding pane: the change since the cell's last pane); per session: events / value.count. */
  events: number;
}

export interface PaneValue {
  count: number;
  errors: number;
  /** errors / count, 0 when count is 0. */
  errorRate: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  /** Distinct users (HyperLogLog estimate). */
  users: number;
  /**
   * Exact count of requests slower than each configured latency threshold: the threshold in ms as
   * a decimal string ("300") → requests with latency_ms > 300. Absent when no thresholds are
   * configured (docs/semantics.md, "Latency thresholds").
   */
  latencyAbove?: Readonly<Record<string, number>>;
}

export {
  AGE_BUCKETS,
  ageBucketOf,
  type AgeBucket,
  type BiasSpread,
  type BiasStage,
  type PaneBias,
} from "./protocol/pane-bias.js";

/**
 * What the reference will likely say of a pane's value: the value corrected by the completeness and
 * bias measured at its stage and age, with its interval and its own measured error.
 */
export interface PaneNowcast {
  value: { count: number; errorRate: number; p99: number; users: number };
  /** 95 % interval half-widths of the corrected values (null when the bias has no spread yet). */
  spread: { count: number | null; errorRate: number | null; p99: number | null; users: number | null };
  /**
   * The nowcast's own measured error against the reference at this stage and age (nowcast −
   * reference, signed, every field: countPct > 0 means the nowcast over-counts), with its 95 %
   * interval half-widths (`spread`, absent from engines that do not send it).
   */
  error: {
    countPct: number | null;
    errorRatePp: number | null;
    p99Pct: number | null;
    usersPct: number | null;
    windows: number;
    spread?: BiasSpread;
  };
}

/**
 * Lateness correlation of one (policy, service): events that missed the policy's on-time pane (late or
 * dropped) against those on time, over the last N reference-closed windows.
 */
export interface LatenessCorrelation {
  onTimeEvents: number;
  onTimeErrors: number;
  lateEvents: number;
  lateErrors: number;
  /** Two-proportion z statistic (late − on-time error rate) and its two-sided p value; null when untestable. */
  z: number | null;
  p: number | null;
  /** Late error rate / on-time error rate; null when the on-time rate is 0. */
  ratio: number | null;
  /** p < 0.01 and the minimum effect holds (docs/semantics.md, "Correlated lateness"). */
  flagged: boolean;
}

/** One service's measured dial under a policy and window size (engine status, /api/policies). */
export interface ServiceDial {
  service: string;
  windowMs: number;
  onTime: PaneBias;
  final: PaneBias;
  lateness: LatenessCorrelation;
}

/** The pooled bias of one (policy, window size, stage[, age]): the frontier's points. */
export interface StageBias {
  windowMs: number;
  stage: BiasStage;
  age?: AgeBucket;
  bias: PaneBias;
  /** Mean emit delay (log time) of the panes of this stage, ms. */
  emitDelayMs: number | null;
}

/** One emission of one (policy, key, window) (docs/semantics.md, "Pane ids and the key encoding"). */
export interface Pane {
  /** `<policy>|<key>|<windowSize>|<start>`. */
  id: string;
  seq: number;
  kind: PaneKind;
  policy: string;
  key: PaneKey;
  window: { start: number; end: number };
  value: PaneValue;
  watermark: number;
  /** Log time at emission. */
  emittedAt: number;
  /** emittedAt − window.end. */
  emitDelayMs: number;
  /** Wall clock at emit − log time, filled by the runtime (0 offline). */
  pipelineLagMs: number;
  lateAccepted: number;
  dropped: number;
  bias: PaneBias;
  /** The value corrected by the bias measured at its stage and age; absent when none is measured yet. */
  nowcast?: PaneNowcast;
  /** Session panes only. */
  sessions?: PaneSessions;
}

/** A record dropped for a policy, published to TM_LATE (docs/semantics.md, "Late data"). */
export interface LateRecord {
  policy: string;
  reason: "behind-watermark";
  event: TelemetryEvent;
  window: { start: number; end: number };
  watermark: number;
  /** Session drops only: the id of the session the event was dropped from (its window is `window`). */
  session?: string;
}

/**
 * Per-policy part of the engine status (docs/websocket-protocol.md, "Server → client"): what the
 * frontier and health panels show.
 */
export interface PolicyStatusWire {
  name: string;
  label: string;
  /** e.g. "arrival-lag 2s". */
  strategy: string;
  graceMs: number;
  mode: string;
  watermark: number | null;
  lateAccepted: number;
  dropped: number;
  bias: PaneBias;
  /** Mean emit delay (log time) of on-time panes, ms. */
  emitDelayMs: number | null;
  /** Pooled bias per window size and stage (absent from engines before per-stage bias). */
  stages?: StageBias[];
  /**
   * Per service: on-time and final bias and the lateness correlation; at most 100 per window size
   * (flagged first, then the busiest), the rest counted in `servicesOmitted`.
   */
  services?: ServiceDial[];
  /** Services measured but not listed in `services` (absent when none). */
  servicesOmitted?: number;
}

/** Published by each engine worker on core NATS `tm.status` once a second (docs/decisions/0006-engine-runtime.md). */
export interface EngineStatusMessage {
  /**
   * The operator's id, an engine worker's or a merge operator's (stable per checkpoint dir), e.g.
   * "engine-0-7" or "merge-0" (docs/decisions/0045-operator-host.md). Read `operatorId ?? worker`:
   * messages before it carry `worker` only.
   */
  operatorId?: string;
  /** The same id under its first name, kept for readers before `operatorId`. */
  worker: string;
  /** Wall clock at publish, ms. */
  wallTime: number;
  logTime: number | null;
  /** wallTime − logTime. */
  pipelineLagMs: number | null;
  /**
   * Wall clock − log time as the worker handled each event over the last minute, p50 and p99 in
   * ms (within 5 %; null with no item in that minute). Absent from engines before it
   * (docs/decisions/0012-batched-transport.md, "Pipeline lag").
   */
  pipelineLag?: { p50: number | null; p99: number | null };
  partitions: Array<{ partition: number; logTime: number | null; idle: boolean; lastSeq: number }>;
  /** Partition holding the global watermark back (smallest log time among non-idle), if any. */
  heldBackBy: number | null;
  policies: PolicyStatusWire[];
  openWindows: number;
  stateKeys: number;
  stateBytes: number;
  /**
   * Events folded into `(other)` by the cardinality caps since the engine started (serviceCap,
   * routeCapPerService; docs/semantics.md, "Configuration"): counted, never refused. Absent from older engines.
   */
  overflow?: { services: number; routes: number };
  /** The session store, on a worker running session windows (docs/semantics.md, "Session windows"). */
  sessions?: SessionStoreStatus;
  checkpointAgeMs: number | null;
  eventsTotal: number;
  /**
   * Held input (docs/decisions/0035-backpressure.md): which output's acknowledgements hold the
   * input now and for how long, the total held, and each output stream's window. Absent from
   * engines before it.
   */
  backpressure?: BackpressureStatus;
  /**
   * Present on a merge operator's status only (docs/decisions/0029-two-stage-dataflow.md): its
   * `partitions` are every TM_EVENTS partition, each `logTime` the end reported by the upstream
   * workers, and `heldBackBy` the partition holding the merged watermark back, named with its worker.
   */
  merge?: MergeStageStatus;
}

/** A worker's session store in `tm.status`: keys against their cap, what the cap refused, size. */
export interface SessionStoreStatus {
  /** (service, user) keys held, and their cap (`sessions.maxKeys`). */
  keys: number;
  maxKeys: number;
  /** Session rows (one per session, shared by the policies that see it alike). */
  rows: number;
  stateBytes: number;
  /** Events of new keys past the cap since start: counted, not sessionized. */
  overflowEvents: number;
  /** Open sessions summed over the configured policies. */
  openSessions: number;
  /** Joins of two or more sessions by a bridging event, summed over policies (docs/architecture.md, "Glossary"). */
  joins: number;
  /** The same count as `joins`, under its name before the glossary, for older readers. */
  merges: number;
  anonymousEvents: number;
}

/** An operator's held input and output windows in `tm.status` (docs/decisions/0035-backpressure.md). */
export interface BackpressureStatus {
  /** The stream whose acknowledgements hold the input now (TM_PANES, TM_PARTIALS), null: it flows. */
  heldBy: string | null;
  /** Wall ms of the hold in progress (0 when none). */
  heldMs: number;
  /** Wall ms the input was held since the operator started. */
  heldTotalMs: number;
  /** The aligned checkpoint cut and waiting for its acks, with how long it has waited, null: none. */
  checkpointWaiting: { n: number; waitedMs: number } | null;
  /** Per output stream: publishes sent and unacknowledged, waiting to be sent, the bound, resends since start. */
  streams: Record<
    string,
    {
      inFlight: number;
      inFlightBytes: number;
      waiting: number;
      waitingBytes: number;
      limitBytes: number;
      resends: number;
    }
  >;
}

export interface MergeStageStatus {
  /** The worker that last reported `heldBackBy`, null: none holds the merge back. */
  heldBackByWorker: string | null;
  /** Ticks waiting for a slower worker. */
  waitingTicks: number;
  /**
   * TM_PARTIALS messages by outcome since start (`malformed`, `overlap` and `mismatch`: refused,
   * never merged; `mismatch`: cut for another mergePartitions, absent from operators before it).
   */
  batches: { accepted: number; duplicate: number; overlap: number; malformed: number; mismatch?: number };
  /**
   * The aligned checkpoints it coordinates (docs/decisions/0031-aligned-checkpoints.md): the n in
   * flight and the last completed (null: none), the n being aligned and the messages held for it,
   * and the counts completed and aborted since start.
   */
  checkpoints?: {
    inFlight: number | null;
    lastCompleted: number | null;
    aligning: number | null;
    held: number;
    completed: number;
    aborted: number;
  };
}
export {
  BARRIER_HEADER,
  checkpointAckSubject,
  checkpointWaitingSubject,
  parseBarrier,
  STREAM_CHECKPOINTS,
  SUBJECT_CHECKPOINT_ABORT,
  SUBJECT_SAVEPOINT_REQUEST,
  SUBJECT_CHECKPOINT_COMPLETE,
  SUBJECT_CHECKPOINT_START,
  type BarrierBody,
  type CheckpointAbort,
  type CheckpointAck,
  type CheckpointComplete,
  type CheckpointStart,
  type CheckpointWaiting,
} from "./protocol/checkpoint-barrier.js";
