/**
 * Status pieces shared by the window core (core-status.ts) and the session operator
 * (session/session-status.ts): partitions, one policy's row, and the partition holding back.
 */
import type { PolicyDialStatus } from "./dial/dial-status.js";
import type { PolicyState } from "./panes/policy-state.js";
import type { PartitionStatus, PolicyStatus } from "./types.js";
import type { ClockState } from "./watermarks/clock-state.js";
import { describeStrategy, isIdle } from "./watermarks/watermark.js";

/** Finite values as they are, ±Infinity (not yet seen) as null. */
export function orNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

export function partitionStatuses(clock: ClockState, idleTimeoutMs: number): PartitionStatus[] {
  return clock.partitions.map((p, partition) => ({
    partition,
    logTime: orNull(p.logTime),
    idle: isIdle(p, clock.logTime, idleTimeoutMs),
  }));
}

/** One policy's row; `watermark` is its current W in event time, `dial` its measured bias. */
export function policyStatus(p: PolicyState, watermark: number, dial: PolicyDialStatus): PolicyStatus {
  return {
    name: p.cfg.name,
    label: p.cfg.label,
    strategy: describeStrategy(p.cfg.watermark),
    graceMs: p.cfg.graceMs,
    mode: p.cfg.mode,
    watermark: orNull(watermark),
    lateAcceptedWindowEvents: p.lateAcceptedWindowEvents,
    lateAcceptedEvents: p.lateAcceptedEvents,
    droppedWindowEvents: p.droppedWindowEvents,
    droppedEvents: p.droppedEvents,
    bias: dial.bias,
    emitDelayMs: p.emitDelayCount === 0 ? null : p.emitDelaySum / p.emitDelayCount,
    stages: dial.stages,
    services: dial.services,
  };
}

/**
 * The non-idle partition holding watermarks back, or null. With an event-time policy (bounded,
 * percentile) it is the one with the smallest event time seen (one without events first), since the
 * minimum over partitions pins W there; otherwise the one with the smallest log time (a silent one first).
 */
export function heldBackBy(clock: ClockState, idleTimeoutMs: number): number | null {
  const eventTime = clock.policies.some((p) => p.eventTime);
  let best: number | null = null;
  let min = Infinity;
  clock.partitions.forEach((p, i) => {
    const t = eventTime ? p.maxTs : p.spoken ? p.logTime : -Infinity;
    if (!isIdle(p, clock.logTime, idleTimeoutMs) && (best === null || t < min)) {
      best = i;
      min = t;
    }
  });
  return best;
}
