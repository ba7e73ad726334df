/**
 * The contract between the pure core and everything that drives it (runtime, frontier, tests). See
 * docs/semantics.md. The core never reads a clock: log time is the largest ingest_ts it was fed.
 */
import type {
  LateRecord,
  Pane,
  PaneBias,
  PartitionProgress,
  ServiceDial,
  StageBias,
  TelemetryEvent,
} from "../protocol.js";
import type { Aggregate } from "./windows/aggregate.js";

/** How a policy's watermark W is computed (docs/semantics.md, "Watermarks"). */
export type WatermarkStrategyConfig =
  | { kind: "arrival-lag"; lagMs: number }
  | { kind: "bounded"; lagMs: number }
  | { kind: "percentile"; q: number; sample: number }
  /** Offline only: W = logTime − max delay in the recording, computed before the run. */
  | { kind: "perfect"; lagMs: number };

export type AccumulationMode = "accumulating" | "discarding" | "retracting" | "final-only";

/**
 * A policy is data: name + label + watermark + grace + triggers + mode (docs/semantics.md,
 * "Policies are snapshot schedules").
 */
export interface PolicyConfig {
  /** Subject-safe name: [a-z0-9_-]+. */
  name: string;
  /** Human label, e.g. "dashboard: 2 s, biased". */
  label: string;
  watermark: WatermarkStrategyConfig;
  graceMs: number;
  /** Early panes every N ms of log time while the window is open; null = none. */
  earlyEveryMs: number | null;
  /** Late panes at most once per N ms; null = none (late events still update the final). */
  lateEveryMs: number | null;
  mode: AccumulationMode;
}

export type WindowConfig = { kind: "tumbling"; sizeMs: number } | { kind: "sliding"; sizeMs: number; slideMs: number };

export interface CoreConfig {
  /** Number of partitions of TM_EVENTS the core sees (ids 0..partitions-1). */
  partitions: number;
  windows: WindowConfig[];
  policies: PolicyConfig[];
  /** Keep every window to end + this for the bias reference (≥ largest lag + grace). */
  referenceHorizonMs: number;
  /** Rolling mean of bias over the last N reference-closed windows. */
  biasWindows: number;
  /** Max distinct services (live within keyTtl); later ones fold into service "(other)". */
  serviceCap: number;
  /** Max distinct routes per service; overflow goes to route "(other)". */
  routeCapPerService: number;
  /** A key with no event for this long (log time) is dropped from state. */
  keyTtlMs: number;
  /**
   * A partition whose last record is this much log time old is idle: it leaves the event-time
   * minimum until its next record (docs/semantics.md, "Watermarks"). Heartbeats do not count.
   */
  idleTimeoutMs: number;
  /** DDSketch relative accuracy. */
  relativeAccuracy: number;
  /** HyperLogLog precision. */
  hllPrecision: number;
  /**
   * Latency thresholds (ms, ascending, at most 8): every aggregate counts exactly the events slower
   * than each, published as the pane value's `latencyAbove` (docs/semantics.md, "Latency
   * thresholds"); empty: no field, no cost.
   */
  latencyThresholdsMs: readonly number[];
}

/** Where the core sends what it emits. */
export interface CoreOutput {
  pane(pane: Pane): void;
  late(record: LateRecord): void;
}

export interface PartitionStatus {
  partition: number;
  /** Largest ingest_ts seen on this partition (record or heartbeat); -Infinity → null. */
  logTime: number | null;
  /** No record for idleTimeout of log time: out of the event-time minimum until its next record. */
  idle: boolean;
}

export interface PolicyStatus {
  name: string;
  label: string;
  /** e.g. "arrival-lag 2000ms". */
  strategy: string;
  graceMs: number;
  mode: AccumulationMode;
  watermark: number | null;
  /** (event, window) pairs accepted late: an event late for two of the policy's windows counts twice. */
  lateAcceptedWindowEvents: number;
  /** Events accepted late into at least one window of the policy. */
  lateAcceptedEvents: number;
  /**
   * (event, window) pairs dropped (one LateRecord each; the pane field `dropped`): an event behind
   * W + grace for a 10 s and a 60 s window counts twice.
   */
  droppedWindowEvents: number;
  /** Events dropped from at least one window of the policy. */
  droppedEvents: number;
  /** The pooled final bias of the smallest window size (docs/semantics.md, "Measured bias"). */
  bias: PaneBias;
  /** Mean emit delay of on-time panes in log time, ms. */
  emitDelayMs: number | null;
  /** Pooled bias per window size and pane kind the policy emitted at (`stages` on the wire), with the kind's mean emit delay. */
  stages: StageBias[];
  /** Per window size and service: on-time and final bias, lateness correlation (bounded by the service cap). */
  services: ServiceDial[];
}

export interface CoreStatus {
  logTime: number | null;
  partitions: PartitionStatus[];
  policies: PolicyStatus[];
  openWindows: number;
  stateKeys: number;
  /** Estimated heap bytes of window state. */
  stateBytes: number;
  /**
   * Events folded into "(other)" so far: by the service cap (`services`) and by the per-service
   * route cap (`routes`). Folded events are still aggregated, under "(other)".
   */
  overflow: { services: number; routes: number };
  /** Records fed to the core. */
  eventsTotal: number;
  /** Non-idle partition with the smallest log time (holding event-time watermarks back; one that never spoke first), if any. */
  heldBackBy: number | null;
}

/**
 * A snapshot encoded in steps (docs/decisions/0016-checkpoints-without-pause.md): each `next()`
 * encodes a bounded piece of the state (a key with its routes, a window's key, a piece of the
 * checksum); the last returns the bytes `snapshot()` would have returned when the first step ran.
 * No input may reach the core until then — or until a step yields SNAPSHOT_CAPTURED: everything
 * after it is encoded from copies taken before it (docs/decisions/0034-sessions-at-scale.md), so
 * input may resume while the rest encodes. `status()` may be read at any time.
 */
export const SNAPSHOT_CAPTURED = "captured";

export type SnapshotSteps = Generator<void | typeof SNAPSHOT_CAPTURED, Uint8Array, void>;

/**
 * One tick of the merge stage's input (docs/decisions/0029-two-stage-dataflow.md): every upstream
 * worker's partials of the tick, merged per slice and group key, judged at log time `at`.
 */
export interface PartialTick {
  /** The tick's start: its records count as arrived then. */
  at: number;
  /** Clocks of the partitions with records in the tick, after it. */
  clocks: readonly PartitionProgress[];
  deltas: readonly { sliceMs: number; sliceStart: number; service: string; agg: Aggregate }[];
}

/** The pure engine. Feed it in interleaved arrival order (ingest_ts non-decreasing across calls). */
export interface StreamCore {
  event(partition: number, event: TelemetryEvent, out: CoreOutput): void;
  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void;
  /** The merge stage's input: a merged tick of partials (absent: this core takes records only). */
  partial?(tick: PartialTick, out: CoreOutput): void;
  /**
   * The q-quantile of partition `partition`'s recent arrival delays per percentile-watermark policy
   * (those with a sample), for the merge stage (undefined: no such policy, or not this core).
   */
  delayQuantiles?(partition: number): Record<string, number> | undefined;
  /** End of a recording (offline): finalize every open window with what it holds. */
  finish(out: CoreOutput): void;
  /**
   * Partitions this core will never be fed again — a group of a worker restored from another
   * layout's checkpoint holds its old worker's other partitions (docs/decisions/0057-elastic-workers.md):
   * idle from now on, so they hold no event-time watermark back (absent: the core has no such state).
   */
  retire?(partitions: readonly number[]): void;
  /**
   * Log time reached `logTime` through input of partitions this core is not fed (another group of a
   * grouped worker, docs/decisions/0057-elastic-workers.md): timers and watermarks move as one
   * core's would, no partition's clock does (absent: the core is never grouped).
   */
  advance?(logTime: number, out: CoreOutput): void;
  status(): CoreStatus;
  /** Versioned, checksummed; restoring it and continuing gives byte-identical panes. */
  snapshot(): Uint8Array;
  /** The same snapshot in steps (absent: the runtime takes `snapshot()` in one step). */
  snapshotSteps?(): SnapshotSteps;
}
