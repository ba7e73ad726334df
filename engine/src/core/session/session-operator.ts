/**
 * The session window operator (docs/decisions/0009-session-windows.md): a pure operator with
 * StreamCore's driving interface. Sessions are keyed by (service, user) and kept per policy (a
 * policy's drops change which events bridge, so sessions cannot be shared across policies: cost per
 * event is O(policies), see docs/decisions/0009). An InputDriver takes the inputs and keeps time
 * (watermarks, due timers, early ticks), exactly as for the window core; this file places events
 * into sessions and turns timers into panes.
 */
import { isError, type LateRecord, type TelemetryEvent } from "../../protocol.js";
import { InputDriver } from "../input-driver.js";
import { emitsOnTime, hasFinalPane, type PolicyState } from "../policy-state.js";
import { TimerKind } from "../timer-queue.js";
import type { CoreConfig, CoreOutput, StreamCore } from "../types.js";
import { STAGE_LATE_PENDING, STAGE_ON_TIME, keyIdOf } from "../window-state.js";
import type { SessionConfig } from "./session-config.js";
import { emitSession, retractSession, sessionId, type SessionEmitContext } from "./session-pane.js";
import {
  NONE,
  absorb,
  endOf,
  isKeyEmpty,
  newKeyState,
  newSession,
  touchFrom,
  touchTo,
  type KeyState,
  type Session,
} from "./session-key.js";
import { encodeSessionSnapshot } from "./session-snapshot.js";
import { newSessionState, type SessionState } from "./session-state.js";
import { sessionTimerBefore, SessionTimerKind, type PurgeTimer, type SessionTimer } from "./session-timer.js";
import { sessionStatus, type SessionStatus } from "./session-status.js";

const NO_SESSIONS: readonly Session[] = Object.freeze([]);

const NO_OUTPUT: CoreOutput = { pane: () => undefined, late: () => undefined };

export class SessionOperator implements StreamCore {
  private readonly driver: InputDriver<SessionTimer>;
  /** The configured policies, then the hidden bias reference at index P. */
  private readonly pols: PolicyState[];
  private readonly P: number;
  private readonly ctxs: SessionEmitContext[];

  constructor(
    readonly config: CoreConfig,
    readonly sessions: Readonly<SessionConfig>,
    readonly state: SessionState = newSessionState(config, sessions),
  ) {
    this.pols = state.clock.policies;
    this.P = config.policies.length;
    this.driver = new InputDriver<SessionTimer>(state.clock, sessionTimerBefore, {
      place: (e, out) => this.place(e, out),
      earlyTick: (p, out) => this.earlyTick(p, out),
      fire: (t, out) => this.fire(t, out),
      advanced: () => undefined,
    });
    const seqs = state.seqs;
    this.ctxs = this.pols.map((p) => ({
      policy: p.cfg.name,
      mode: p.cfg.mode,
      gapMs: sessions.gapMs,
      watermark: -Infinity,
      logTime: -Infinity,
      dropped: 0,
      bias: p.bias.current(),
      nextSeq: () => (seqs[p.index] = (seqs[p.index] as number) + 1) - 1,
      out: NO_OUTPUT,
    }));
    this.rebuildTimers();
  }

  /** Timer queues are derived data: every open session's timers, purges, bias compares, early ticks. */
  private rebuildTimers(): void {
    const state = this.state;
    for (const users of state.keys.values()) {
      for (const k of users.values()) {
        for (const p of this.pols) {
          const list = k.sessions[p.index] as Session[];
          for (const s of list) this.scheduleSession(p, s);
          if (list.length === 0 && Number.isFinite(k.closedUntil[p.index])) this.schedulePurge(p, k);
        }
      }
    }
    for (const start of state.bias.windows.keys()) this.scheduleCompare(start);
  }

  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    this.driver.event(partition, e, out);
  }

  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
    this.driver.heartbeat(partition, ingestTs, out);
  }

  setIdle(partition: number, idle: boolean, out: CoreOutput): void {
    this.driver.setIdle(partition, idle, out);
  }

  private get logTime(): number {
    return this.state.clock.logTime;
  }

  private watermarkOf(p: PolicyState): number {
    return this.driver.watermarkOf(p);
  }

  snapshot(): Uint8Array {
    return encodeSessionSnapshot(this.config, this.sessions, this.state);
  }

  /** End of a recording: every open session gets its on-time (if due) and final pane. */
  finish(out: CoreOutput): void {
    for (const users of this.state.keys.values()) {
      for (const key of users.values()) {
        for (const p of this.pols) {
          for (const s of [...(key.sessions[p.index] as Session[])]) {
            if (emitsOnTime(p) && !(s.stage & STAGE_ON_TIME)) this.onTime(p, s, out);
            if (this.state.sessionsById.has(s.id)) this.close(p, s, out);
          }
        }
      }
    }
    for (const start of [...this.state.bias.windows.keys()].sort((a, b) => a - b))
      this.state.bias.compare(start, this.pols, () => true);
  }

  status(): SessionStatus {
    return sessionStatus(this.state);
  }

  /**
   * Makes sure a session has its on-time and final timers. At most one of each is pending: when
   * one fires before the session's (moved) end it re-arms at the current end, so a session that
   * grows by many events costs few timer pushes. A pending timer acts only at the session's current
   * due, so a queue rebuilt on restore (timers at current dues) acts identically.
   */
  private armSession(p: PolicyState, s: Session): void {
    const end = endOf(s, this.sessions.gapMs);
    if (s.onTimeDue === NONE && emitsOnTime(p) && !(s.stage & STAGE_ON_TIME)) {
      s.onTimeDue = this.driver.dueAt(p, end);
      this.driver.atWatermark(p, { due: s.onTimeDue, kind: TimerKind.OnTime, policy: p.index, session: s.id });
    }
    // A policy with an on-time pane arms the final only after it (no re-arming while the session grows).
    if (s.finalDue === NONE && hasFinalPane(p) && (!emitsOnTime(p) || s.stage & STAGE_ON_TIME)) {
      s.finalDue = this.driver.dueAt(p, end + p.cfg.graceMs);
      this.driver.atWatermark(p, { due: s.finalDue, kind: TimerKind.Final, policy: p.index, session: s.id });
    }
  }

  /** Rebuilds a restored session's timers. */
  private scheduleSession(p: PolicyState, s: Session): void {
    this.armSession(p, s);
    if (s.stage & STAGE_LATE_PENDING && p.cfg.lateEveryMs !== null)
      this.driver.atLogTime({
        due: s.lastLateAt + p.cfg.lateEveryMs,
        kind: TimerKind.LateFlush,
        policy: p.index,
        session: s.id,
      });
  }

  /**
   * Purge time of a key's closed-session bound L (when the key has no open session): at
   * W ≥ L + 3·gap + grace an event within gap of L is late on its own window, and any session
   * opened from then on starts after L + 2·gap, so nothing accepted can bridge into the closed one.
   */
  private purgeAt(p: PolicyState, k: KeyState): number {
    return (k.closedUntil[p.index] as number) + 3 * this.sessions.gapMs + p.cfg.graceMs;
  }

  private schedulePurge(p: PolicyState, k: KeyState): void {
    const due = this.driver.dueAt(p, this.purgeAt(p, k));
    this.driver.atWatermark(p, { due, kind: SessionTimerKind.Purge, policy: p.index, key: k.id });
  }

  private keyOf(service: string, user: string): KeyState {
    let users = this.state.keys.get(service);
    if (users === undefined) this.state.keys.set(service, (users = new Map()));
    let k = users.get(user);
    if (k === undefined) {
      k = newKeyState(this.state.nextId++, service, user, keyIdOf(service, user), this.pols.length);
      users.set(user, k);
      this.state.keysById.set(k.id, k);
    }
    return k;
  }

  private place(e: TelemetryEvent, out: CoreOutput): void {
    if (e.user === "") {
      this.state.anonymous++;
      return;
    }
    const k = this.keyOf(e.service, e.user);
    const period = Math.floor(e.ts / this.sessions.maxLengthMs);
    const error = isError(e.status);
    for (const p of this.pols) this.placeFor(p, k, e, period, error, out);
    if (isKeyEmpty(k)) this.dropKey(k);
  }

  /** Places the event into the policy's sessions of the key (or drops it for the policy). */
  private placeFor(
    p: PolicyState,
    k: KeyState,
    e: TelemetryEvent,
    period: number,
    error: boolean,
    out: CoreOutput,
  ): void {
    const gap = this.sessions.gapMs;
    const list = k.sessions[p.index] as Session[];
    const W = this.watermarkOf(p);
    const closed = k.closedUntil[p.index] as number;
    // Joining (or bridging to) a closed session would change a result the policy has forgotten.
    if (e.ts < closed + gap && Math.floor(closed / this.sessions.maxLengthMs) === period)
      return this.drop(p, k, e, Math.min(e.ts, closed), closed + gap, W, out);
    const from = touchFrom(list, period, e.ts, gap);
    const to = touchTo(list, from, period, e.ts, gap);
    const first = to > from ? Math.min(e.ts, (list[from] as Session).firstTs) : e.ts;
    const end = (to > from ? Math.max(e.ts, (list[to - 1] as Session).lastTs) : e.ts) + gap;
    if (end + p.cfg.graceMs <= W) return this.drop(p, k, e, first, end, W, out);
    let s: Session;
    const swallowed = to - from > 1 ? list.splice(from + 1, to - from - 1) : NO_SESSIONS;
    if (to === from) {
      s = newSession(this.state.nextId++, p.index, k, period, e.ts, e.route, error);
      // Opened already behind W: no on-time pane, its panes are late ones (docs/semantics.md, "Late data").
      if (end <= W && emitsOnTime(p)) s.stage = STAGE_ON_TIME;
      list.splice(from, 0, s);
      this.state.sessionsById.set(s.id, s);
    } else {
      s = list[from] as Session;
      for (const o of swallowed) {
        absorb(s, o.firstTs, o.firstRoute, o.lastTs, o.lastRoute, o.count, o.errors);
        s.lateAccepted += o.lateAccepted;
      }
      absorb(s, e.ts, e.route, e.ts, e.route, 1, error ? 1 : 0);
    }
    if (swallowed.length > 0 && p.index < this.P) this.state.merges++;
    if (end <= W) {
      p.lateAccepted++;
      s.lateAccepted++;
    }
    this.changed(p, s, swallowed, out);
  }

  private changed(p: PolicyState, s: Session, swallowed: readonly Session[], out: CoreOutput): void {
    const ctx = this.ctx(p, out);
    let retracted = false;
    for (const o of swallowed) {
      this.state.sessionsById.delete(o.id);
      if (retractSession(ctx, o)) retracted = true;
    }
    if (s.last !== null && s.last.start !== s.firstTs) retracted = retractSession(ctx, s) || retracted;
    const end = endOf(s, this.sessions.gapMs);
    const behind = end <= ctx.watermark;
    if (!behind) s.stage &= ~STAGE_ON_TIME;
    if (retracted) {
      emitSession(ctx, s, behind ? "late" : "early");
      if (behind) s.stage |= STAGE_ON_TIME;
    } else if (behind && s.stage & STAGE_ON_TIME) this.lateAccepted(p, s);
    this.armSession(p, s);
    if (s.dirty && !s.queued && p.cfg.earlyEveryMs !== null && emitsOnTime(p)) {
      s.queued = true;
      (this.state.early[p.index] as Session[]).push(s);
    }
  }

  private lateAccepted(p: PolicyState, s: Session): void {
    const every = p.cfg.lateEveryMs;
    if (every === null || s.stage & STAGE_LATE_PENDING) return;
    s.stage |= STAGE_LATE_PENDING;
    this.driver.atLogTime({
      due: Math.max(this.logTime, s.lastLateAt + every),
      kind: TimerKind.LateFlush,
      policy: p.index,
      session: s.id,
    });
  }

  private drop(
    p: PolicyState,
    k: KeyState,
    e: TelemetryEvent,
    start: number,
    end: number,
    W: number,
    out: CoreOutput,
  ): void {
    p.dropped++;
    if (p.index === this.P) return;
    const session = sessionId(p.cfg.name, k.keyId, this.sessions.gapMs, start);
    const rec: LateRecord = {
      policy: p.cfg.name,
      reason: "behind-watermark",
      event: e,
      window: { start, end },
      watermark: W,
      session,
    };
    out.late(rec);
  }

  /** The policy's emit context, refreshed (one object per policy: no allocation per event). */
  private ctx(p: PolicyState, out: CoreOutput): SessionEmitContext {
    const c = this.ctxs[p.index] as SessionEmitContext;
    c.watermark = this.watermarkOf(p);
    c.logTime = this.logTime;
    c.dropped = p.dropped;
    c.bias = p.bias.current();
    c.out = out;
    return c;
  }

  private fire(t: SessionTimer, out: CoreOutput): void {
    const p = this.pols[t.policy] as PolicyState;
    if (t.kind === SessionTimerKind.Compare) return this.compare(t.metricsWindow);
    if (t.kind === SessionTimerKind.Purge) return this.purge(p, t);
    const s = this.state.sessionsById.get(t.session);
    if (s === undefined || s.policy !== p.index) return;
    const end = endOf(s, this.sessions.gapMs);
    if (t.kind === TimerKind.LateFlush) return this.lateFlush(p, s, out);
    if (t.kind === TimerKind.OnTime && t.due === s.onTimeDue) {
      s.onTimeDue = NONE;
      if (s.stage & STAGE_ON_TIME) return;
      if (t.due < end + p.lagMs) return this.armSession(p, s);
      return this.onTime(p, s, out);
    }
    if (t.kind === TimerKind.Final && t.due === s.finalDue) {
      s.finalDue = NONE;
      if (t.due < end + p.cfg.graceMs + p.lagMs) return this.armSession(p, s);
      this.close(p, s, out);
    }
  }

  /** Early panes of the sessions changed since the last tick (in the order they changed). */
  private earlyTick(p: PolicyState, out: CoreOutput): void {
    const ctx = this.ctx(p, out);
    const queue = this.state.early[p.index] as Session[];
    this.state.early[p.index] = [];
    for (const s of queue) {
      s.queued = false;
      if (this.state.sessionsById.get(s.id) !== s) continue;
      if (s.dirty && !(s.stage & STAGE_ON_TIME) && endOf(s, this.sessions.gapMs) > ctx.watermark)
        emitSession(ctx, s, "early");
    }
  }

  private lateFlush(p: PolicyState, s: Session, out: CoreOutput): void {
    if (!(s.stage & STAGE_LATE_PENDING)) return;
    s.stage &= ~STAGE_LATE_PENDING;
    s.lastLateAt = this.logTime;
    if (s.dirty && s.stage & STAGE_ON_TIME) emitSession(this.ctx(p, out), s, "late");
  }

  private onTime(p: PolicyState, s: Session, out: CoreOutput): void {
    s.stage |= STAGE_ON_TIME;
    emitSession(this.ctx(p, out), s, "on-time");
    p.emitDelaySum += this.logTime - endOf(s, this.sessions.gapMs);
    p.emitDelayCount++;
    if (hasFinalPane(p)) this.armSession(p, s);
    else this.close(p, s, out);
  }

  /** The policy's last word on a session: its final pane (if the mode has one), then forget it. */
  private close(p: PolicyState, s: Session, out: CoreOutput): void {
    const fresh = this.state.bias.record(p.index, s.key.service, endOf(s, this.sessions.gapMs), s.errors > 0);
    if (fresh !== null) this.scheduleCompare(fresh);
    if (hasFinalPane(p) && p.index < this.P) {
      emitSession(this.ctx(p, out), s, "final");
      if (!emitsOnTime(p)) {
        p.emitDelaySum += this.logTime - endOf(s, this.sessions.gapMs);
        p.emitDelayCount++;
      }
    }
    const k = s.key;
    const list = k.sessions[p.index] as Session[];
    list.splice(list.indexOf(s), 1);
    this.state.sessionsById.delete(s.id);
    if (s.lastTs > (k.closedUntil[p.index] as number)) k.closedUntil[p.index] = s.lastTs;
    if (list.length === 0) this.schedulePurge(p, k);
  }

  /** The reference closes a metrics window once W_ref passes its end. */
  private scheduleCompare(start: number): void {
    const due = start + this.sessions.metricsWindowMs + this.config.referenceHorizonMs;
    this.driver.atLogTime({ due, kind: SessionTimerKind.Compare, policy: this.P, metricsWindow: start });
  }

  private compare(start: number): void {
    const end = start + this.sessions.metricsWindowMs;
    this.state.bias.compare(start, this.pols, (p) => this.watermarkOf(p) >= end + p.cfg.graceMs);
  }

  private purge(p: PolicyState, t: PurgeTimer): void {
    const k = this.state.keysById.get(t.key);
    if (k === undefined || (k.sessions[p.index] as Session[]).length > 0) return;
    if (t.due !== this.purgeAt(p, k) + p.lagMs) return;
    k.closedUntil[p.index] = -Infinity;
    if (isKeyEmpty(k)) this.dropKey(k);
  }

  private dropKey(k: KeyState): void {
    this.state.keysById.delete(k.id);
    const users = this.state.keys.get(k.service);
    users?.delete(k.user);
    if (users?.size === 0) this.state.keys.delete(k.service);
  }
}
