/**
 * A policy's live progress: its watermark, counters, bias and timers (docs/semantics.md,
 * "Policies are snapshot schedules").
 */
import { BiasTracker } from "./bias.js";
import { TimerQueue } from "./timer-queue.js";
import type { CoreConfig, PolicyConfig } from "./types.js";
import { DelaySample, isEventTime } from "./watermark.js";

export interface PolicyRuntime {
  readonly cfg: PolicyConfig;
  readonly index: number;
  /** bounded / percentile: W tracked on event time, with its own timer queue keyed by W. */
  readonly eventTime: boolean;
  /** arrival-lag / perfect lag (W = logTime − lag); 0 for event-time strategies. */
  readonly lagMs: number;
  /** Current W of an event-time policy (monotone); unused for arrival-lag. */
  W: number;
  /** Percentile strategy: recent delays per partition. */
  readonly samples: DelaySample[] | null;
  readonly timers: TimerQueue | null;
  dropped: number;
  lateAccepted: number;
  readonly bias: BiasTracker;
  emitDelaySum: number;
  emitDelayCount: number;
  /** Log time of the next early tick; Infinity when none is scheduled. */
  nextEarly: number;
}

export function policyRuntimes(config: CoreConfig): PolicyRuntime[] {
  return config.policies.map((cfg, index) => {
    const s = cfg.watermark;
    const eventTime = isEventTime(s);
    return {
      cfg,
      index,
      eventTime,
      lagMs: s.kind === "percentile" || eventTime ? 0 : s.lagMs,
      W: -Infinity,
      samples:
        s.kind === "percentile"
          ? Array.from({ length: config.partitions }, () => new DelaySample(s.q, s.sample))
          : null,
      timers: eventTime ? new TimerQueue() : null,
      dropped: 0,
      lateAccepted: 0,
      bias: new BiasTracker(config.biasWindows),
      emitDelaySum: 0,
      emitDelayCount: 0,
      nextEarly: Infinity,
    };
  });
}

/** True when the policy emits panes before its final (every mode but final-only). */
export function emitsOnTime(p: PolicyRuntime): boolean {
  return p.cfg.mode !== "final-only";
}

/** True when the policy has a separate final pane after its on-time pane. */
export function hasFinalPane(p: PolicyRuntime): boolean {
  return p.cfg.mode === "final-only" || p.cfg.graceMs > 0;
}
