/**
 * Session triggers (docs/decisions/0009-session-windows.md, decision 8): what a due session timer
 * does — early ticks, late flushes, on-time and final panes, purging a key's closed-session bound,
 * the reference's bias compare — and finishing a recording.
 *
 * Invariants, as for window triggers (core/triggers.ts): a trigger runs when its timer is due, in
 * the timers' total order, with log time and every watermark already advanced. It acts on the one
 * session (or key, or metrics window) its timer names, and a timer that no longer matches the
 * session's pending due does nothing, so a queue rebuilt on restore acts identically. A trigger
 * emits only through the emit context, arms timers only through the driver, and never moves time.
 */
import { emitsOnTime, hasFinalPane, type PolicyState } from "../policy-state.js";
import { TimerKind } from "../timer-queue.js";
import type { CoreOutput } from "../types.js";
import { SLOT_FINAL, SLOT_ON_TIME } from "../stage-slot.js";
import { STAGE_LATE_PENDING, STAGE_ON_TIME } from "../window-state.js";
import type { SessionConfig } from "./session-config.js";
import { COUNTED_ON_TIME, endOf, isKeyEmpty, type KeyState, type Session } from "./session-key.js";
import { emitSession, type SessionEmitContext } from "./session-pane.js";
import { dropFacts, laneOf } from "./session-lanes.js";
import { dropKey, type SessionState } from "./session-state.js";
import {
  armCompare,
  armPurge,
  armSession,
  purgeAt,
  SessionTimerKind,
  type SessionTimer,
  type SessionTimerView,
} from "./session-timer.js";

/** What session triggers work on: the operator's state, its settings, its driver, its panes. */
export interface SessionTriggerContext {
  readonly state: SessionState;
  readonly settings: Readonly<SessionConfig>;
  readonly referenceHorizonMs: number;
  readonly driver: SessionTimerView;
  /** The policy's emit context now (watermark, log time, counters, output). */
  emitContext(p: PolicyState, out: CoreOutput): SessionEmitContext;
}

export function fireSessionTimer(ctx: SessionTriggerContext, t: SessionTimer, out: CoreOutput): void {
  const p = ctx.state.clock.policies[t.policy] as PolicyState;
  if (t.kind === SessionTimerKind.Compare) return compare(ctx, t.target);
  if (t.kind === SessionTimerKind.Purge) return purge(ctx, p, t);
  const s = t.session as Session;
  if (!s.live) return;
  if (t.kind === TimerKind.LateFlush) return lateFlush(ctx, p, s, out);
  sessionDue(ctx, p, s, t, out);
}

/** An on-time or final timer: acts if it is the pending one and the session's end has not moved past it. */
function sessionDue(ctx: SessionTriggerContext, p: PolicyState, s: Session, t: SessionTimer, out: CoreOutput): void {
  const end = endOf(s, ctx.settings.gapMs);
  if (t.kind === TimerKind.OnTime && t === s.onTime) {
    s.onTime = null;
    if (s.stage & STAGE_ON_TIME) return;
    if (t.due < end + p.lagMs) return armSession(ctx.driver, p, s, ctx.settings.gapMs);
    return onTime(ctx, p, s, out);
  }
  if (t.kind === TimerKind.Final && t === s.final) {
    s.final = null;
    if (t.due < end + p.cfg.graceMs + p.lagMs) return armSession(ctx.driver, p, s, ctx.settings.gapMs);
    close(ctx, p, s, out);
  }
}

/**
 * What the wheel asks before sorting a bucket (docs/decisions/0026-session-flat.md). An on-time or
 * final timer of a session that has grown past it would only re-arm at the session's current end
 * when it fires (sessionDue), so it takes that due now. A timer that is no longer its session's
 * pending one, or whose session is closed or swallowed, would do nothing: it is dropped. The timer
 * that finally acts is the one sessionDue would have armed: same due, kind, policy, target.
 */
export function settleSessionTimer(ctx: SessionTriggerContext, t: SessionTimer): boolean {
  if (t.kind !== TimerKind.OnTime && t.kind !== TimerKind.Final) return true;
  const s = t.session as Session;
  const onTime = t.kind === TimerKind.OnTime;
  if (t !== (onTime ? s.onTime : s.final)) return false;
  if (!s.live) {
    if (onTime) s.onTime = null;
    else s.final = null;
    return false;
  }
  const p = ctx.state.clock.policies[t.policy] as PolicyState;
  if (onTime && s.stage & STAGE_ON_TIME) return true;
  const due = ctx.driver.dueAt(p, endOf(s, ctx.settings.gapMs) + (onTime ? 0 : p.cfg.graceMs));
  if (t.due < due) t.due = due;
  return true;
}

/** Early panes of the sessions changed since the last tick (in the order they changed). */
export function sessionEarlyTick(ctx: SessionTriggerContext, p: PolicyState, out: CoreOutput): void {
  const emit = ctx.emitContext(p, out);
  const state = ctx.state;
  const queue = state.early[p.index] as Session[];
  state.early[p.index] = [];
  for (const s of queue) {
    s.queued = false;
    if (!s.live) continue;
    if (s.dirty && !(s.stage & STAGE_ON_TIME) && endOf(s, ctx.settings.gapMs) > emit.watermark)
      emitSession(emit, s, "early");
  }
}

function lateFlush(ctx: SessionTriggerContext, p: PolicyState, s: Session, out: CoreOutput): void {
  if (!(s.stage & STAGE_LATE_PENDING)) return;
  s.stage &= ~STAGE_LATE_PENDING;
  s.lastLateAt = ctx.state.clock.logTime;
  if (s.dirty && s.stage & STAGE_ON_TIME) emitSession(ctx.emitContext(p, out), s, "late");
}

function onTime(ctx: SessionTriggerContext, p: PolicyState, s: Session, out: CoreOutput): void {
  s.stage |= STAGE_ON_TIME;
  emitSession(ctx.emitContext(p, out), s, "on-time");
  const end = endOf(s, ctx.settings.gapMs);
  const delay = ctx.state.clock.logTime - end;
  p.emitDelaySum += delay;
  p.emitDelayCount++;
  ctx.state.bias.emitted(p.index, SLOT_ON_TIME, delay);
  // What the first on-time pane showed counts once, in the metrics window of the session's end then.
  if (!(s.stage & COUNTED_ON_TIME)) {
    s.stage |= COUNTED_ON_TIME;
    const fresh = ctx.state.bias.record(p.index, s.key.service, end, s.facts.errors > 0, SLOT_ON_TIME);
    if (fresh !== null) armCompare(ctx.driver, ctx.state.clock.policies.length - 1, fresh, compareDue(ctx, fresh));
  }
  if (hasFinalPane(p)) armSession(ctx.driver, p, s, ctx.settings.gapMs);
  else close(ctx, p, s, out);
}

/** The policy's last word on a session: its final pane (if the mode has one), then forget it. */
function close(ctx: SessionTriggerContext, p: PolicyState, s: Session, out: CoreOutput): void {
  const state = ctx.state;
  const reference = state.clock.policies.length - 1;
  const end = endOf(s, ctx.settings.gapMs);
  const fresh = state.bias.record(p.index, s.key.service, end, s.facts.errors > 0, SLOT_FINAL);
  if (fresh !== null) armCompare(ctx.driver, reference, fresh, compareDue(ctx, fresh));
  state.bias.emitted(p.index, SLOT_FINAL, state.clock.logTime - end);
  if (hasFinalPane(p) && p.index < reference) {
    emitSession(ctx.emitContext(p, out), s, "final");
    if (!emitsOnTime(p)) {
      p.emitDelaySum += state.clock.logTime - end;
      p.emitDelayCount++;
    }
  }
  const k = s.key;
  const f = s.facts;
  f.views[p.index] = null;
  if (--f.viewers === 0) dropFacts(k, f);
  s.live = false;
  state.openSessions--;
  if (f.lastTs > (k.closedUntil[p.index] as number)) k.closedUntil[p.index] = f.lastTs;
  k.open[p.index] = (k.open[p.index] as number) - 1;
  if (k.open[p.index] === 0) armPurge(ctx.driver, p, k, ctx.settings.gapMs);
}

/** The reference closes a metrics window once its W passes the window's end. */
export function compareDue(ctx: SessionTriggerContext, start: number): number {
  return start + ctx.settings.metricsWindowMs + ctx.referenceHorizonMs;
}

function compare(ctx: SessionTriggerContext, start: number): void {
  const end = start + ctx.settings.metricsWindowMs;
  const driver = ctx.driver;
  const state = ctx.state;
  state.bias.compare(
    start,
    state.clock.policies,
    (p) => driver.watermarkOf(p) >= end + p.cfg.graceMs,
    state.clock.logTime,
  );
}

function purge(ctx: SessionTriggerContext, p: PolicyState, t: SessionTimer): void {
  const k = t.key as KeyState;
  if (!k.live || (k.open[p.index] as number) > 0) return;
  if (t.due !== purgeAt(p, k, ctx.settings.gapMs) + p.lagMs) return;
  k.closedUntil[p.index] = -Infinity;
  if (isKeyEmpty(k)) dropKey(ctx.state, k);
}

/** End of a recording: every open session gets its on-time (if due) and final pane. */
export function finishSessions(ctx: SessionTriggerContext, out: CoreOutput): void {
  const state = ctx.state;
  const policies = state.clock.policies;
  for (const users of state.keys.values()) {
    for (const key of users.values()) {
      for (const p of policies) {
        const open: Session[] = [];
        for (const f of laneOf(key, p.index).sessions) {
          const s = f.views[p.index];
          if (s !== null && s !== undefined) open.push(s);
        }
        for (const s of open) {
          if (emitsOnTime(p) && !(s.stage & STAGE_ON_TIME)) onTime(ctx, p, s, out);
          if (s.live) close(ctx, p, s, out);
        }
      }
    }
  }
  for (const start of [...state.bias.windows.keys()].sort((a, b) => a - b))
    state.bias.compare(start, policies, () => true, state.clock.logTime);
}
