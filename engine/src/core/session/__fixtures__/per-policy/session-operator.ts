/**
 * Test oracle (docs/decisions/0018-shared-sessions.md): the session operator as it was before the
 * policies shared one session store — one sessionizer per policy, each with its own sessions per
 * (service, user). Kept verbatim (imports moved, status and snapshot left out) so the shared
 * operator's output can be compared with it on random streams.
 */
import { isError, type LateRecord, type TelemetryEvent } from "../../../../protocol.js";
import { InputDriver } from "../../../input-driver.js";
import { emitsOnTime, type PolicyState } from "../../../policy-state.js";
import type { CoreConfig, CoreOutput, StreamCore } from "../../../types.js";
import { STAGE_LATE_PENDING, STAGE_ON_TIME } from "../../../window-state.js";
import type { SessionConfig } from "../../session-config.js";
import {
  absorb,
  COUNTED_ON_TIME,
  endOf,
  isKeyEmpty,
  newSession,
  touchFrom,
  touchTo,
  type KeyState,
  type Session,
} from "./session-key.js";
import { emitSession, retractSession, sessionId, type SessionEmitContext } from "./session-pane.js";
import { dropKey, keyOf, newSessionState, type SessionState } from "./session-state.js";
import { armCompare, armLateFlush, armPurge, armSession, rearmSession, sessionTimerBefore } from "./session-timer.js";
import type { SessionTimer } from "./session-timer.js";
import {
  compareDue,
  finishSessions,
  fireSessionTimer,
  sessionEarlyTick,
  type SessionTriggerContext,
} from "./session-triggers.js";

const NO_SESSIONS: readonly Session[] = Object.freeze([]);

const NO_OUTPUT: CoreOutput = { pane: () => undefined, late: () => undefined };

export class PerPolicySessionOperator implements Omit<StreamCore, "status" | "snapshot"> {
  private readonly driver: InputDriver<SessionTimer>;
  /** The configured policies, then the hidden bias reference (at referenceIndex). */
  private readonly policies: PolicyState[];
  private readonly referenceIndex: number;
  private readonly emitContexts: SessionEmitContext[];
  private readonly triggers: SessionTriggerContext;

  constructor(
    readonly config: CoreConfig,
    readonly sessions: Readonly<SessionConfig>,
    readonly state: SessionState = newSessionState(config, sessions),
  ) {
    this.policies = state.clock.policies;
    this.referenceIndex = config.policies.length;
    this.driver = new InputDriver<SessionTimer>(state.clock, config.idleTimeoutMs, sessionTimerBefore, {
      place: (e, out) => this.place(e, out),
      earlyTick: (p, out) => sessionEarlyTick(this.triggers, p, out),
      fire: (t, out) => fireSessionTimer(this.triggers, t, out),
      advanced: () => {
        if (state.services.maintain(state.clock.logTime, config.keyTtlMs))
          state.bias.sweep(state.clock.logTime - config.keyTtlMs);
      },
    });
    this.emitContexts = this.policies.map((p) => this.newEmitContext(p));
    this.triggers = {
      state,
      settings: sessions,
      referenceHorizonMs: config.referenceHorizonMs,
      driver: this.driver,
      emitContext: (p, out) => this.emitContext(p, out),
    };
    this.rearm();
  }

  private newEmitContext(p: PolicyState): SessionEmitContext {
    const seqs = this.state.seqs;
    return {
      policy: p.cfg.name,
      mode: p.cfg.mode,
      gapMs: this.sessions.gapMs,
      watermark: -Infinity,
      logTime: -Infinity,
      dropped: 0,
      biasOf: (service, slot) => this.state.bias.biasOf(p.index, service, slot),
      nextSeq: () => (seqs[p.index] = (seqs[p.index] as number) + 1) - 1,
      out: NO_OUTPUT,
    };
  }

  /** Timer queues are derived data: every open session's timers, purges, bias compares (early ticks: the driver's). */
  private rearm(): void {
    const gap = this.sessions.gapMs;
    for (const users of this.state.keys.values()) {
      for (const k of users.values()) {
        for (const p of this.policies) {
          const list = k.sessions[p.index] as Session[];
          for (const s of list) rearmSession(this.driver, p, s, gap);
          if (list.length === 0 && Number.isFinite(k.closedUntil[p.index])) armPurge(this.driver, p, k, gap);
        }
      }
    }
    for (const start of this.state.bias.windows.keys())
      armCompare(this.driver, this.referenceIndex, start, compareDue(this.triggers, start));
  }

  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    this.driver.event(partition, e, out);
  }

  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
    this.driver.heartbeat(partition, ingestTs, out);
  }

  finish(out: CoreOutput): void {
    finishSessions(this.triggers, out);
  }

  /** The policy's emit context, refreshed (one object per policy: no allocation per event). */
  private emitContext(p: PolicyState, out: CoreOutput): SessionEmitContext {
    const c = this.emitContexts[p.index] as SessionEmitContext;
    c.watermark = this.driver.watermarkOf(p);
    c.logTime = this.state.clock.logTime;
    c.dropped = p.droppedWindowEvents;
    c.out = out;
    return c;
  }

  private place(e: TelemetryEvent, out: CoreOutput): void {
    if (e.user === "") {
      this.state.anonymous++;
      return;
    }
    // Past the service cap, a service's users share the keys of service "(other)" (docs/semantics.md, "Windows").
    const service = this.state.services.service(e.service, this.state.clock.logTime);
    const k = keyOf(this.state, service, e.user);
    const period = Math.floor(e.ts / this.sessions.maxLengthMs);
    const error = isError(e.status);
    for (const p of this.policies) this.placeFor(p, k, e, period, error, out);
    if (isKeyEmpty(k)) dropKey(this.state, k);
  }

  /** Places the event into the policy's sessions of the key, or drops it for the policy. */
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
    const watermark = this.driver.watermarkOf(p);
    const closed = k.closedUntil[p.index] as number;
    // Joining (or bridging to) a closed session would change a result the policy has forgotten.
    if (e.ts < closed + gap && Math.floor(closed / this.sessions.maxLengthMs) === period)
      return this.drop(p, k, e, Math.min(e.ts, closed), closed + gap, watermark, out);
    const from = touchFrom(list, period, e.ts, gap);
    const to = touchTo(list, from, period, e.ts, gap);
    const first = to > from ? Math.min(e.ts, (list[from] as Session).firstTs) : e.ts;
    const end = (to > from ? Math.max(e.ts, (list[to - 1] as Session).lastTs) : e.ts) + gap;
    if (end + p.cfg.graceMs <= watermark) return this.drop(p, k, e, first, end, watermark, out);
    const swallowed = to - from > 1 ? list.splice(from + 1, to - from - 1) : NO_SESSIONS;
    const s = to === from ? this.open(p, k, list, from, e, period, error, end <= watermark) : (list[from] as Session);
    if (to !== from) join(s, swallowed, e, error);
    if (swallowed.length > 0 && p.index < this.referenceIndex) this.state.merges++;
    if (end <= watermark) {
      // One session per event and policy: pairs and events are the same count here.
      p.lateAcceptedWindowEvents++;
      p.lateAcceptedEvents++;
      s.lateAccepted++;
    }
    this.changed(p, s, swallowed, out);
  }

  /**
   * A new session at `from` in the list. Opened already behind W (`late`): no on-time pane, its
   * panes are late ones (docs/semantics.md, "Late data").
   */
  private open(
    p: PolicyState,
    k: KeyState,
    list: Session[],
    from: number,
    e: TelemetryEvent,
    period: number,
    error: boolean,
    late: boolean,
  ): Session {
    const s = newSession(this.state.nextId++, p.index, k, period, e.ts, e.route, error);
    if (late && emitsOnTime(p)) s.stage = STAGE_ON_TIME;
    list.splice(from, 0, s);
    this.state.sessionsById.set(s.id, s);
    return s;
  }

  /** Emits what a change to session s calls for: retractions, a late or early pane, its timers. */
  private changed(p: PolicyState, s: Session, swallowed: readonly Session[], out: CoreOutput): void {
    const ctx = this.emitContext(p, out);
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
    armSession(this.driver, p, s, this.sessions.gapMs);
    if (s.dirty && !s.queued && p.cfg.earlyEveryMs !== null && emitsOnTime(p)) {
      s.queued = true;
      (this.state.early[p.index] as Session[]).push(s);
    }
  }

  /** A late event changed a session past its on-time pane: one late flush pending, at most every lateEvery. */
  private lateAccepted(p: PolicyState, s: Session): void {
    const every = p.cfg.lateEveryMs;
    if (every === null || s.stage & STAGE_LATE_PENDING) return;
    s.stage |= STAGE_LATE_PENDING;
    armLateFlush(this.driver, p, s, Math.max(this.state.clock.logTime, s.lastLateAt + every));
  }

  private drop(
    p: PolicyState,
    k: KeyState,
    e: TelemetryEvent,
    start: number,
    end: number,
    watermark: number,
    out: CoreOutput,
  ): void {
    p.droppedWindowEvents++;
    p.droppedEvents++;
    if (p.index === this.referenceIndex) return;
    const session = sessionId(p.cfg.name, k.keyId, this.sessions.gapMs, start);
    const rec: LateRecord = {
      policy: p.cfg.name,
      reason: "behind-watermark",
      event: e,
      window: { start, end },
      watermark,
      session,
    };
    out.late(rec);
  }
}

/** Folds the swallowed sessions and the event into s. */
function join(s: Session, swallowed: readonly Session[], e: TelemetryEvent, error: boolean): void {
  for (const o of swallowed) {
    absorb(s, o.firstTs, o.firstRoute, o.lastTs, o.lastRoute, o.count, o.errors);
    s.lateAccepted += o.lateAccepted;
    // The merged session was shown on time once already (as the swallowed one): it is not counted again.
    s.stage |= o.stage & COUNTED_ON_TIME;
  }
  absorb(s, e.ts, e.route, e.ts, e.route, 1, error ? 1 : 0);
}
