/**
 * A policy's progress, part of the operator's state (docs/semantics.md, "Policies are snapshot
 * schedules"): its watermark, counters and next early tick (its measured bias is the operator's dials). Its timer queue is not
 * state: the operator rebuilds it from the windows or sessions (docs/decisions/0010).
 */
import type { CoreConfig, PolicyConfig } from "../types.js";
import { DelaySample, isEventTime } from "../watermarks/watermark.js";

export interface PolicyState {
  readonly cfg: PolicyConfig;
  readonly index: number;
  /** bounded / percentile: W tracked on event time, its timers ordered by W. */
  readonly eventTime: boolean;
  /** arrival-lag / perfect lag (W = logTime − lag); 0 for event-time strategies. */
  readonly lagMs: number;
  /** Current W of an event-time policy (monotone); unused for arrival-lag. */
  eventTimeWatermark: number;
  /** Percentile strategy: recent delays per partition. */
  readonly samples: DelaySample[] | null;
  /** (event, window) pairs dropped for the policy (the pane field `dropped`). */
  droppedWindowEvents: number;
  /** Events dropped from at least one window of the policy. */
  droppedEvents: number;
  /** (event, window) pairs accepted late. */
  lateAcceptedWindowEvents: number;
  /** Events accepted late into at least one window. */
  lateAcceptedEvents: number;
  emitDelaySum: number;
  emitDelayCount: number;
  /** Log time of the next early tick; Infinity when none is scheduled. */
  nextEarly: number;
}

export function newPolicyState(cfg: PolicyConfig, index: number, partitions: number): PolicyState {
  const s = cfg.watermark;
  const eventTime = isEventTime(s);
  return {
    cfg,
    index,
    eventTime,
    lagMs: s.kind === "percentile" || eventTime ? 0 : s.lagMs,
    eventTimeWatermark: -Infinity,
    samples: s.kind === "percentile" ? Array.from({ length: partitions }, () => new DelaySample(s.q, s.sample)) : null,
    droppedWindowEvents: 0,
    droppedEvents: 0,
    lateAcceptedWindowEvents: 0,
    lateAcceptedEvents: 0,
    emitDelaySum: 0,
    emitDelayCount: 0,
    nextEarly: Infinity,
  };
}

/** The policies of a config (plus any appended, e.g. the session operator's hidden reference). */
export function policyStates(config: CoreConfig, policies: readonly PolicyConfig[] = config.policies): PolicyState[] {
  return policies.map((cfg, index) => newPolicyState(cfg, index, config.partitions));
}

/** True when the policy emits panes before its final (every mode but final-only). */
export function emitsOnTime(p: PolicyState): boolean {
  return p.cfg.mode !== "final-only";
}

/** True when the policy has a separate final pane after its on-time pane. */
export function hasFinalPane(p: PolicyState): boolean {
  return p.cfg.mode === "final-only" || p.cfg.graceMs > 0;
}
