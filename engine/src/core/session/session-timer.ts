/**
 * The session operator's timers (docs/decisions/0009-session-windows.md, decision 8): a policy's
 * early tick; a session's late flush, on-time or final (naming the session); the purge of a key's
 * closed-session bound (naming the key); the reference's bias compare of a metrics window (naming
 * the window's start). Total order: (due, kind, policy, target id). A timer holds its session or
 * key itself; one whose target is no longer live does nothing. Below: how the operator arms them.
 */
import type { DriverView } from "../input-driver.js";
import { emitsOnTime, hasFinalPane, type PolicyState } from "../policy-state.js";
import { TimerKind, type EarlyTimer, type Timer } from "../timer-queue.js";
import { STAGE_LATE_PENDING, STAGE_ON_TIME } from "../window-state.js";
import { endOf, NONE, type KeyState, type Session } from "./session-key.js";

export const SessionTimerKind = { ...TimerKind, Compare: 4, Purge: 5 } as const;

/**
 * Every session timer carries the id that orders it after (due, kind, policy) in `target` (read
 * inline by the heap: no pointer chase per comparison) and the session or key it acts on.
 */
export interface SessionTrigger extends Timer {
  readonly kind: typeof TimerKind.LateFlush | typeof TimerKind.OnTime | typeof TimerKind.Final;
  /** The session's id. */
  readonly target: number;
  readonly session: Session;
}

export interface PurgeTimer extends Timer {
  readonly kind: typeof SessionTimerKind.Purge;
  /** The key's id. */
  readonly target: number;
  readonly key: KeyState;
}

export interface CompareTimer extends Timer {
  readonly kind: typeof SessionTimerKind.Compare;
  /** Start of the metrics window the reference closes. */
  readonly target: number;
}

/** The operator's own timers (early ticks are the input driver's). */
export type SessionTimer = SessionTrigger | PurgeTimer | CompareTimer;

/** Total order (due, kind, policy, target); an early tick is alone at its (due, kind, policy). */
export function sessionTimerBefore(a: SessionTimer | EarlyTimer, b: SessionTimer | EarlyTimer): boolean {
  if (a.due !== b.due) return a.due < b.due;
  if (a.kind !== b.kind) return a.kind < b.kind;
  if (a.policy !== b.policy) return a.policy < b.policy;
  return a.kind !== TimerKind.Early && (a as SessionTimer).target < (b as SessionTimer).target;
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
    driver.atWatermark(p, { due: s.onTimeDue, kind: TimerKind.OnTime, policy: p.index, target: s.id, session: s });
  }
  // A policy with an on-time pane arms the final only after it (no re-arming while the session grows).
  if (s.finalDue === NONE && hasFinalPane(p) && (!emitsOnTime(p) || s.stage & STAGE_ON_TIME)) {
    s.finalDue = driver.dueAt(p, end + p.cfg.graceMs);
    driver.atWatermark(p, { due: s.finalDue, kind: TimerKind.Final, policy: p.index, target: s.id, session: s });
  }
}

/** Arms a late flush at log time `due`. */
export function armLateFlush(driver: DriverView<SessionTimer>, p: PolicyState, s: Session, due: number): void {
  driver.atLogTime({ due, kind: TimerKind.LateFlush, policy: p.index, target: s.id, session: s });
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
  driver.atWatermark(p, { due, kind: SessionTimerKind.Purge, policy: p.index, target: k.id, key: k });
}

/** The reference compares a metrics window once its W passes the window's end (`due`). */
export function armCompare(driver: DriverView<SessionTimer>, reference: number, start: number, due: number): void {
  driver.atLogTime({ due, kind: SessionTimerKind.Compare, policy: reference, target: start });
}
