/**
 * The session operator's timers (docs/decisions/0009-session-windows.md, decision 8): a policy's
 * early tick; a session's late flush, on-time or final (naming the session); the purge of a key's
 * closed-session bound (naming the key); the reference's bias compare of a metrics window (naming
 * the window's start). Total order: (due, kind, policy, target).
 */
import { compareTimers, TimerKind, type EarlyTimer, type Timer } from "../timer-queue.js";

export const SessionTimerKind = { ...TimerKind, Compare: 4, Purge: 5 } as const;

export interface SessionTrigger extends Timer {
  readonly kind: typeof TimerKind.LateFlush | typeof TimerKind.OnTime | typeof TimerKind.Final;
  readonly session: number;
}

export interface PurgeTimer extends Timer {
  readonly kind: typeof SessionTimerKind.Purge;
  readonly key: number;
}

export interface CompareTimer extends Timer {
  readonly kind: typeof SessionTimerKind.Compare;
  /** Start of the metrics window the reference closes. */
  readonly metricsWindow: number;
}

/** The operator's own timers (early ticks are the input driver's). */
export type SessionTimer = SessionTrigger | PurgeTimer | CompareTimer;

function targetOf(t: SessionTimer | EarlyTimer): number {
  switch (t.kind) {
    case TimerKind.Early:
      return 0;
    case SessionTimerKind.Purge:
      return t.key;
    case SessionTimerKind.Compare:
      return t.metricsWindow;
    default:
      return t.session;
  }
}

export function sessionTimerBefore(a: SessionTimer | EarlyTimer, b: SessionTimer | EarlyTimer): boolean {
  const c = compareTimers(a, b);
  return c !== 0 ? c < 0 : targetOf(a) < targetOf(b);
}
