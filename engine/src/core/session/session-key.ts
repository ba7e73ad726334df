/**
 * Sessions of one key (docs/semantics.md, "Session windows"; docs/decisions/0018-shared-sessions.md).
 * Per (service, user) a KeyState holds lanes: a lane is one sorted list of SessionFacts (the
 * boundaries, counts and routes of a session, computed once) shared by a set of policies. Each
 * policy is in exactly one lane of the key and has a Session (its view: triggers, panes, lateness)
 * on the facts it still has open. Facts of one lane never overlap within a cap period, so the facts
 * an event touches are one contiguous run of the lane's list. A policy whose view of an event
 * differs from its lane's (it drops what the others keep) moves to a lane of its own.
 */
import type { PaneKey } from "../../protocol.js";
import type { Timer } from "../timer-queue.js";

/** A session's event facts, shared by the policies of its lane that have it open. */
export interface SessionFacts {
  /** Cap period: floor(ts / maxLength); sessions of different periods never merge. */
  readonly period: number;
  firstTs: number;
  lastTs: number;
  count: number;
  errors: number;
  firstRoute: string;
  lastRoute: string;
  lane: Lane;
  /** Per policy index: its open view of these facts, or null. */
  readonly views: (Session | null)[];
  /** Number of non-null views. */
  viewers: number;
}

/** A policy's open session: its view of shared facts. */
export interface Session {
  /** Operator-unique, monotone: orders the session's timers. */
  readonly id: number;
  readonly policy: number;
  readonly key: KeyState;
  facts: SessionFacts;
  /** False once closed or swallowed: its pending timers and queue entries do nothing. */
  live: boolean;
  /** STAGE_* bits of the core's window state (on-time fired, late pane pending). */
  stage: number;
  lastLateAt: number;
  /** Changed since its last pane. */
  dirty: boolean;
  lateAccepted: number;
  /**
   * The last pane emitted for the session, what a retraction takes back, kept as plain fields (no
   * objects that outlive the pane: docs/decisions/0020-session-speed.md). `lastId` is its pane id
   * (derived from its start, not snapshotted), null when there is none; its value is always the
   * full (count, errors, users 1) of the session then, whatever the mode.
   */
  lastId: string | null;
  /** Stage slot of the pane (stage-slot.ts; -1: early): a retraction carries that stage's bias. */
  lastSlot: number;
  lastStart: number;
  lastEnd: number;
  lastCount: number;
  lastErrors: number;
  lastDurationMs: number;
  lastFirstRoute: string;
  lastLastRoute: string;
  /**
   * The pending on-time / final timer (null: none), not snapshotted. A reference, not its due: no
   * boxed number to load per event (docs/decisions/0026-session-flat.md).
   */
  onTime: SessionTimer | null;
  final: SessionTimer | null;
  /** In its policy's early queue. */
  queued: boolean;
}

/** Policies that see the same sessions of a key: one sorted facts list for all of them. */
export interface Lane {
  readonly sessions: SessionFacts[];
  /** Policy indexes, ascending. */
  policies: number[];
}

/**
 * Session stage bit beside the core's STAGE_* bits: the session (or one it swallowed) was counted at
 * its first on-time pane for the on-time bias (session-bias.ts); it counts there once.
 */
export const COUNTED_ON_TIME = 8;

export interface KeyState {
  readonly id: number;
  readonly service: string;
  readonly user: string;
  /** keyIdOf(service, user): the pane-id part. */
  readonly keyId: string;
  /** `{ service, user }`: the key of every pane of the key's sessions (one object, never changed). */
  readonly paneKey: PaneKey;
  /** Usually one lane holding every policy; more while the policies' views differ. */
  readonly lanes: Lane[];
  /** Per policy: largest lastTs of a closed session (−Infinity: none kept). */
  readonly closedUntil: number[];
  /** Per policy: its open sessions of the key. */
  readonly open: number[];
  /** False once the key is forgotten: its pending purge timers do nothing. */
  live: boolean;
}

export function newKeyState(id: number, service: string, user: string, keyId: string, policies: number): KeyState {
  const all: number[] = [];
  const closedUntil: number[] = [];
  const open: number[] = [];
  for (let p = 0; p < policies; p++) {
    all.push(p);
    closedUntil.push(-Infinity);
    open.push(0);
  }
  const paneKey = { service, user };
  return { id, service, user, keyId, paneKey, lanes: [{ sessions: [], policies: all }], closedUntil, open, live: true };
}

export function isKeyEmpty(k: KeyState): boolean {
  for (let p = 0; p < k.open.length; p++)
    if ((k.open[p] as number) > 0 || (k.closedUntil[p] as number) > -Infinity) return false;
  return true;
}

export function newFacts(
  lane: Lane,
  policies: number,
  period: number,
  ts: number,
  route: string,
  error: boolean,
): SessionFacts {
  return {
    period,
    firstTs: ts,
    lastTs: ts,
    count: 1,
    errors: error ? 1 : 0,
    firstRoute: route,
    lastRoute: route,
    lane,
    views: new Array<Session | null>(policies).fill(null),
    viewers: 0,
  };
}

export function newSession(id: number, policy: number, key: KeyState, facts: SessionFacts): Session {
  return {
    id,
    policy,
    key,
    facts,
    live: true,
    stage: 0,
    lastLateAt: -Infinity,
    dirty: true,
    lateAccepted: 0,
    lastId: null,
    lastSlot: -1,
    lastStart: 0,
    lastEnd: 0,
    lastCount: 0,
    lastErrors: 0,
    lastDurationMs: 0,
    lastFirstRoute: "",
    lastLastRoute: "",
    onTime: null,
    final: null,
    queued: false,
  };
}

/** Folds another session's facts (or one event's) into f. Ties in ts keep the smaller route. */
export function absorb(
  f: SessionFacts,
  firstTs: number,
  firstRoute: string,
  lastTs: number,
  lastRoute: string,
  count: number,
  errors: number,
): void {
  if (firstTs < f.firstTs || (firstTs === f.firstTs && firstRoute < f.firstRoute)) {
    f.firstTs = firstTs;
    f.firstRoute = firstRoute;
  }
  if (lastTs > f.lastTs || (lastTs === f.lastTs && lastRoute < f.lastRoute)) {
    f.lastTs = lastTs;
    f.lastRoute = lastRoute;
  }
  f.count += count;
  f.errors += errors;
}

/**
 * Start of the run [from, to) of sessions an event at ts (in `period`) joins: those with
 * firstTs − gap < ts < lastTs + gap. When the run is empty, `from` is where a new session goes.
 */
export function touchFrom(list: readonly SessionFacts[], period: number, ts: number, gapMs: number): number {
  let from = 0;
  while (from < list.length) {
    const s = list[from] as SessionFacts;
    if (s.period > period || (s.period === period && s.lastTs + gapMs > ts)) break;
    from++;
  }
  return from;
}

/** End of that run. */
export function touchTo(
  list: readonly SessionFacts[],
  from: number,
  period: number,
  ts: number,
  gapMs: number,
): number {
  let to = from;
  while (to < list.length) {
    const s = list[to] as SessionFacts;
    if (s.period !== period || s.firstTs - gapMs >= ts) break;
    to++;
  }
  return to;
}

/** Session end: last event + gap (docs/semantics.md, "Session windows"). */
export function endOf(s: Session, gapMs: number): number {
  return s.facts.lastTs + gapMs;
}

/**
 * Every session timer carries the id that orders it after (due, kind, policy) in `target` (read
 * inline by the comparison: no pointer chase) and what it acts on: a late flush, on-time or final
 * its session (target: the session's id), a purge its key (target: the key's id), a compare nothing
 * (target: start of the metrics window the reference closes). One shape for all, recycled once fired
 * (session-timer-queues.ts): a timer lives in no other structure.
 */
export interface SessionTimer extends Timer {
  due: number;
  kind: number;
  policy: number;
  target: number;
  session: Session | null;
  key: KeyState | null;
}
