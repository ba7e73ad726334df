/**
 * The session operator's timers (docs/decisions/0009-session-windows.md, decision 8): a policy's
 * early tick; a session's late flush, on-time or final (naming the session); the purge of a key's
 * closed-session bound (naming the key); the reference's bias compare of a metrics window (naming
 * the window's start). Total order: (due, kind, policy, target id). A timer holds its session or
 * key itself; one whose target is no longer live does nothing. Below: how the operator arms them.
 */
import type { DriverView } from "../input-driver.js";
import { emitsOnTime, hasFinalPane, type PolicyState } from "../policy-state.js";
import { TimerKind } from "../timer-queue.js";
import { STAGE_LATE_PENDING, STAGE_ON_TIME } from "../window-state.js";
import { endOf, type KeyState, type Session, type SessionTimer } from "./session-key.js";

export const SessionTimerKind = { ...TimerKind, Compare: 4, Purge: 5 } as const;

export type { SessionTimer } from "./session-key.js";

/** Where the operator arms its timers: the driver's view, and a spare timer object to fill. */
export interface SessionTimerView extends DriverView<SessionTimer> {
  spare(): SessionTimer;
}

function timer(
  driver: SessionTimerView,
  due: number,
  kind: number,
  policy: number,
  target: number,
  session: Session | null,
  key: KeyState | null,
): SessionTimer {
  const t = driver.spare();
  t.due = due;
  t.kind = kind;
  t.policy = policy;
  t.target = target;
  t.session = session;
  t.key = key;
  return t;
}

/**
 * Total order (due, kind, policy, target) as a number (negative: a first). Dues are finite or −Infinity
 * (a restored late flush that never ran: lastLateAt + lateEvery), where the subtraction gives NaN and falls through.
 * The driver orders the wheels' proxies (and its early ticks) the same way (session-timer-queues.ts).
 */
export function compareSessionTimers(a: SessionTimer, b: SessionTimer): number {
  return a.due - b.due || a.kind - b.kind || a.policy - b.policy || a.target - b.target;
}

/**
 * Makes sure a session has its on-time and final timers. At most one of each is pending: when one
 * fires before the session's (moved) end it re-arms at the current end, so a session that grows by
 * many events costs few timer pushes. A pending timer acts only at the session's current due, so a
 * queue rebuilt on restore (timers at current dues) acts identically.
 */
export function armSession(driver: SessionTimerView, p: PolicyState, s: Session, gapMs: number): void {
  const end = endOf(s, gapMs);
  if (s.onTime === null && emitsOnTime(p) && !(s.stage & STAGE_ON_TIME)) {
    s.onTime = timer(driver, driver.dueAt(p, end), TimerKind.OnTime, p.index, s.id, s, null);
    driver.atWatermark(p, s.onTime);
  }
  // A policy with an on-time pane arms the final only after it (no re-arming while the session grows).
  if (s.final === null && hasFinalPane(p) && (!emitsOnTime(p) || s.stage & STAGE_ON_TIME)) {
    s.final = timer(driver, driver.dueAt(p, end + p.cfg.graceMs), TimerKind.Final, p.index, s.id, s, null);
    driver.atWatermark(p, s.final);
  }
}

/** Arms a late flush at log time `due`. */
export function armLateFlush(driver: SessionTimerView, p: PolicyState, s: Session, due: number): void {
  driver.atLogTime(timer(driver, due, TimerKind.LateFlush, p.index, s.id, s, null));
}

/** Rebuilds a restored session's timers. */
export function rearmSession(driver: SessionTimerView, p: PolicyState, s: Session, gapMs: number): void {
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

export function armPurge(driver: SessionTimerView, p: PolicyState, k: KeyState, gapMs: number): void {
  const due = driver.dueAt(p, purgeAt(p, k, gapMs));
  driver.atWatermark(p, timer(driver, due, SessionTimerKind.Purge, p.index, k.id, null, k));
}

/** The reference compares a metrics window once its W passes the window's end (`due`). */
export function armCompare(driver: SessionTimerView, reference: number, start: number, due: number): void {
  driver.atLogTime(timer(driver, due, SessionTimerKind.Compare, reference, start, null, null));
}
