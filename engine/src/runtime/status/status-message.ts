/**
 * Builds the `tm.status` message (EngineStatusMessage, protocol.ts) from the core and the interleave.
 * A partition's `idle` is the core's judgement (log time, docs/semantics.md, "Watermarks");
 * `heldBackBy` is the partition the interleave has waited for for two missed heartbeats (one that sent
 * nothing, not even a heartbeat: a fault, see partition-interleave.ts and stall-watch.ts), else the core's: the non-idle partition
 * holding the watermarks back (smallest event time with an event-time policy, else smallest log time).
 * Each policy carries the core's measured dial: pooled bias per window size and stage, and per
 * service (docs/semantics.md, "Measured bias"), at most STATUS_MAX_SERVICES services per window size
 * (status-services.ts).
 */
import { formatDuration } from "../../core/duration.js";
import type { CoreStatus, PolicyConfig, WatermarkStrategyConfig } from "../../core/types.js";
import type { BackpressureStatus, EngineStatusMessage, PolicyStatusWire } from "../../protocol.js";
import type { LaneOffset } from "../input/partition-interleave.js";
import type { LagPercentiles } from "./pipeline-lag.js";
import { sessionsOf } from "./session-gauges.js";
import { boundServices } from "./status-services.js";

export interface StatusInputs {
  worker: string;
  wallTime: number;
  core: CoreStatus;
  policies: readonly PolicyConfig[];
  /** Owned partition ids in lane order. */
  partitions: readonly number[];
  /** Largest ingest_ts shown by each lane (received, released or not). */
  laneTimes: ReadonlyArray<number | null>;
  /** The lane the interleave has waited for for HOLD_MS (stall-watch.ts), null when it does not wait that long. */
  waitingFor: number | null;
  offsets: readonly LaneOffset[];
  lastCheckpointWall: number | null;
  eventsTotal: number;
  /** The last minute's pipeline lag percentiles (PipelineLag.percentiles). */
  pipelineLag: LagPercentiles;
  /** Held input and the output windows (backpressure-status.ts). */
  backpressure?: BackpressureStatus;
}

export function strategyText(w: WatermarkStrategyConfig): string {
  if (w.kind === "percentile") return `percentile q${w.q} of ${w.sample}`;
  return `${w.kind} ${formatDuration(w.lagMs)}`;
}

/** The session store's figures, when the core runs sessions (docs/decisions/0034-sessions-at-scale.md). */
function sessionsPart(core: CoreStatus): Pick<EngineStatusMessage, "sessions"> {
  const s = sessionsOf(core);
  if (s === undefined) return {};
  return {
    sessions: {
      keys: s.sessionKeys,
      maxKeys: s.maxSessionKeys,
      rows: s.sessionRows,
      stateBytes: s.stateBytes,
      overflowEvents: s.overflowEvents,
      openSessions: s.openSessions,
      joins: s.joins,
      merges: s.joins,
      anonymousEvents: s.anonymousEvents,
    },
  };
}

export function buildStatusMessage(s: StatusInputs): EngineStatusMessage {
  const partitions = s.partitions.map((partition, lane) => ({
    partition,
    logTime: s.laneTimes[lane] ?? null,
    idle: s.core.partitions[lane]?.idle ?? false,
    lastSeq: s.offsets[lane]?.lastSeq ?? 0,
  }));
  const lane = s.waitingFor ?? s.core.heldBackBy;
  const heldBackBy = lane === null ? null : (s.partitions[lane] ?? null);
  const byName = new Map(s.policies.map((p) => [p.name, p]));
  const policies: PolicyStatusWire[] = s.core.policies.map((p) => {
    const cfg = byName.get(p.name);
    const { services, omitted } = boundServices(p.services);
    return {
      name: p.name,
      label: p.label,
      strategy: cfg ? strategyText(cfg.watermark) : "",
      graceMs: cfg?.graceMs ?? 0,
      mode: cfg?.mode ?? "",
      watermark: p.watermark,
      lateAccepted: p.lateAcceptedWindowEvents,
      dropped: p.droppedWindowEvents,
      bias: p.bias,
      emitDelayMs: p.emitDelayMs,
      stages: p.stages,
      services,
      ...(omitted > 0 ? { servicesOmitted: omitted } : {}),
    };
  });
  const logTime = s.core.logTime;
  return {
    operatorId: s.worker,
    worker: s.worker,
    wallTime: s.wallTime,
    logTime,
    pipelineLagMs: logTime === null ? null : s.wallTime - logTime,
    pipelineLag: s.pipelineLag,
    partitions,
    heldBackBy: partitions.length > 1 ? heldBackBy : null,
    policies,
    openWindows: s.core.openWindows,
    stateKeys: s.core.stateKeys,
    stateBytes: s.core.stateBytes,
    overflow: { ...s.core.overflow },
    ...sessionsPart(s.core),
    checkpointAgeMs: s.lastCheckpointWall === null ? null : s.wallTime - s.lastCheckpointWall,
    eventsTotal: s.eventsTotal,
    ...(s.backpressure ? { backpressure: s.backpressure } : {}),
  };
}
