/**
 * The window core's timers (docs/semantics.md, "Policies are snapshot schedules"): a policy's early
 * tick, or a (policy, window) trigger — late flush, on-time, final — or the reference closing a
 * window. A window timer names its window by window config and start.
 */
import { compareTimers, TimerKind, type EarlyTimer, type Timer } from "./timer-queue.js";

export const WindowTimerKind = { ...TimerKind, Reference: 4 } as const;

export interface WindowTimer extends Timer {
  readonly kind:
    | typeof WindowTimerKind.LateFlush
    | typeof WindowTimerKind.OnTime
    | typeof WindowTimerKind.Final
    | typeof WindowTimerKind.Reference;
  /** Index of the window's config. */
  readonly configIndex: number;
  readonly start: number;
}

export type CoreTimer = EarlyTimer | WindowTimer;

/** The total order (due, kind, policy, window config, window start). */
export function coreTimerBefore(a: CoreTimer, b: CoreTimer): boolean {
  const c = compareTimers(a, b);
  if (c !== 0) return c < 0;
  // Equal (due, kind, policy): both are window timers (a policy has one early tick at a time).
  const x = a as WindowTimer;
  const y = b as WindowTimer;
  if (x.configIndex !== y.configIndex) return x.configIndex < y.configIndex;
  return x.start < y.start;
}
