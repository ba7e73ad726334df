/**
 * The session operator's timers (docs/decisions/0009-session-windows.md, decision 8): a policy's
 * early tick; a session's late flush, on-time or final (naming the session); the purge of a key's
 * closed-session bound (naming the key); the reference's bias compare of a metrics window (naming
 * the window's start). Total order: (due, kind, policy, target). Below: how the operator arms them.
 */
import type { DriverView } from "../../../input-driver.js";
import { emitsOnTime, hasFinalPane, type PolicyState } from "../../../policy-state.js";
import { compareTimers, TimerKind, type EarlyTimer, type Timer } from "../../../timer-queue.js";
import { STAGE_LATE_PENDING, STAGE_ON_TIME } from "../../../window-state.js";
import { endOf, NONE, type KeyState, type Session } from "./session-key.js";

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

/**
 * Makes sure a session has its on-time and final timers. At most one of each is pending: when one
 * fires before the session's (moved) end it re-arms at the current end, so a session that grows by
 * many events costs few timer pushes. A pending timer acts only at the session's current due, so a
 * queue rebuilt on restore (timers at current dues) acts identically.
 */
export function armSession(driver: DriverView<SessionTimer>, p: PolicyState, s: Session, gapMs: number): void {
  const end = endOf(s, gapMs);
  if (s.onTimeDue === NONE && emitsOnTime(p) && !(s.stage & STAGE_ON_TIME)) {
    s.onTimeDue = driver.dueAt(p, end);
    driver.atWatermark(p, { due: s.onTimeDue, kind: TimerKind.OnTime, policy: p.index, session: s.id });
  }
  // A policy with an on-time pane arms the final only after it (no re-arming while the session grows).
  if (s.finalDue === NONE && hasFinalPane(p) && (!emitsOnTime(p) || s.stage & STAGE_ON_TIME)) {
    s.finalDue = driver.dueAt(p, end + p.cfg.graceMs);
    driver.atWatermark(p, { due: s.finalDue, kind: TimerKind.Final, policy: p.index, session: s.id });
  }
}

/** Arms a late flush at log time `due`. */
export function armLateFlush(driver: DriverView<SessionTimer>, p: PolicyState, s: Session, due: number): void {
  driver.atLogTime({ due, kind: TimerKind.LateFlush, policy: p.index, session: s.id });
}

/** Rebuilds a restored session's timers. */
export function rearmSession(driver: DriverView<SessionTimer>, p: PolicyState, s: Session, gapMs: number): void {
  armSession(driver, p, s, gapMs);
  if (s.stage & STAGE_LATE_PENDING && p.cfg.lateEveryMs !== null)
    armLateFlush(driver, p, s, s.lastLateAt + p.cfg.lateEveryMs);
}

/**
 * Purge time of a key's closed-session bound L (when the key has no open session): at
 * W ≥ L + 3·gap + grace an event within gap of L is late on its own window, and any session opened
 * from then on starts after L + 2·gap, so nothing accepted can bridge into the closed one.
 */
export function purgeAt(p: PolicyState, k: KeyState, gapMs: number): number {
  return (k.closedUntil[p.index] as number) + 3 * gapMs + p.cfg.graceMs;
}

export function armPurge(driver: DriverView<SessionTimer>, p: PolicyState, k: KeyState, gapMs: number): void {
  const due = driver.dueAt(p, purgeAt(p, k, gapMs));
  driver.atWatermark(p, { due, kind: SessionTimerKind.Purge, policy: p.index, key: k.id });
}

/** The reference compares a metrics window once its W passes the window's end (`due`). */
export function armCompare(driver: DriverView<SessionTimer>, reference: number, start: number, due: number): void {
  driver.atLogTime({ due, kind: SessionTimerKind.Compare, policy: reference, metricsWindow: start });
}
