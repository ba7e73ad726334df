/**
 * Sessions of one key (docs/semantics.md, "Session windows"). Per (service, user) a KeyState holds,
 * for every policy, its open sessions sorted by first event time; sessions of one key never overlap
 * within a cap period, so the sessions an event touches are one contiguous run of that list.
 */
import type { PaneSession, PaneValue } from "../../../../protocol.js";

/** The last pane emitted for a session: what a retraction takes back. */
export interface EmittedSession {
  value: PaneValue;
  /** Stage slot of the pane (stage-slot.ts; -1: early): a retraction carries that stage's bias. */
  slot: number;
  start: number;
  end: number;
  session: PaneSession;
}

export interface Session {
  /** Operator-unique, monotone: names the session in timers. */
  readonly id: number;
  readonly policy: number;
  readonly key: KeyState;
  /** Cap period: floor(ts / maxLength); sessions of different periods never merge. */
  readonly period: number;
  firstTs: number;
  lastTs: number;
  count: number;
  errors: number;
  firstRoute: string;
  lastRoute: string;
  /** STAGE_* bits of the core's window state (on-time fired, late pane pending). */
  stage: number;
  lastLateAt: number;
  /** Changed since its last pane. */
  dirty: boolean;
  lateAccepted: number;
  last: EmittedSession | null;
  /** Due of the pending on-time / final timer (NONE: none pending); not snapshotted. */
  onTimeDue: number;
  finalDue: number;
  /** In its policy's early queue. */
  queued: boolean;
}

/**
 * Session stage bit beside the core's STAGE_* bits: the session (or one it swallowed) was counted at
 * its first on-time pane for the on-time bias (session-bias.ts); it counts there once.
 */
export const COUNTED_ON_TIME = 8;

/** No timer pending. */
export const NONE = -Infinity;

export interface KeyState {
  readonly id: number;
  readonly service: string;
  readonly user: string;
  /** keyIdOf(service, user): the pane-id part. */
  readonly keyId: string;
  /** Per policy: open sessions sorted by firstTs. */
  readonly sessions: Session[][];
  /** Per policy: largest lastTs of a closed session (−Infinity: none kept). */
  readonly closedUntil: Float64Array;
}

export function newKeyState(id: number, service: string, user: string, keyId: string, policies: number): KeyState {
  return {
    id,
    service,
    user,
    keyId,
    sessions: Array.from({ length: policies }, () => []),
    closedUntil: new Float64Array(policies).fill(-Infinity),
  };
}

export function isKeyEmpty(k: KeyState): boolean {
  for (let p = 0; p < k.sessions.length; p++) {
    if ((k.sessions[p] as Session[]).length > 0 || (k.closedUntil[p] as number) > -Infinity) return false;
  }
  return true;
}

export function newSession(
  id: number,
  policy: number,
  key: KeyState,
  period: number,
  ts: number,
  route: string,
  error: boolean,
): Session {
  return {
    id,
    policy,
    key,
    period,
    firstTs: ts,
    lastTs: ts,
    count: 1,
    errors: error ? 1 : 0,
    firstRoute: route,
    lastRoute: route,
    stage: 0,
    lastLateAt: -Infinity,
    dirty: true,
    lateAccepted: 0,
    last: null,
    onTimeDue: NONE,
    finalDue: NONE,
    queued: false,
  };
}

/** Folds another session's facts (or one event's) into s. Ties in ts keep the smaller route. */
export function absorb(
  s: Session,
  firstTs: number,
  firstRoute: string,
  lastTs: number,
  lastRoute: string,
  count: number,
  errors: number,
): void {
  if (firstTs < s.firstTs || (firstTs === s.firstTs && firstRoute < s.firstRoute)) {
    s.firstTs = firstTs;
    s.firstRoute = firstRoute;
  }
  if (lastTs > s.lastTs || (lastTs === s.lastTs && lastRoute < s.lastRoute)) {
    s.lastTs = lastTs;
    s.lastRoute = lastRoute;
  }
  s.count += count;
  s.errors += errors;
  s.dirty = true;
}

/**
 * Start of the run [from, to) of sessions an event at ts (in `period`) joins: those with
 * firstTs − gap < ts < lastTs + gap. When the run is empty, `from` is where a new session goes.
 */
export function touchFrom(list: readonly Session[], period: number, ts: number, gapMs: number): number {
  let from = 0;
  while (from < list.length) {
    const s = list[from] as Session;
    if (s.period > period || (s.period === period && s.lastTs + gapMs > ts)) break;
    from++;
  }
  return from;
}

/** End of that run. */
export function touchTo(list: readonly Session[], from: number, period: number, ts: number, gapMs: number): number {
  let to = from;
  while (to < list.length) {
    const s = list[to] as Session;
    if (s.period !== period || s.firstTs - gapMs >= ts) break;
    to++;
  }
  return to;
}

/** Session end: last event + gap (docs/semantics.md, "Session windows"). */
export function endOf(s: Session, gapMs: number): number {
  return s.lastTs + gapMs;
}
