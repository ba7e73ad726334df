/**
 * The session window operator (docs/decisions/0009-session-windows.md): a pure operator with
 * StreamCore's driving interface. Sessions are keyed by (service, user). The policies share one
 * session store per key (docs/decisions/0018-shared-sessions.md): an event is placed once into the
 * sessions of each lane of its key (usually one, holding every policy), and each policy keeps only
 * what differs — its lateness verdict, its view of the session (triggers, last pane), its closed
 * bounds. An InputDriver takes the inputs and keeps time (watermarks, due timers, early ticks),
 * exactly as for the window core; this file places events into sessions (merging, dropping,
 * retracting); session-triggers.ts turns timers into panes.
 */
import { isError, type LateRecord, type TelemetryEvent } from "../../protocol.js";
import { InputDriver } from "../input-driver.js";
import { emitsOnTime, type PolicyState } from "../policy-state.js";
import type { CoreConfig, CoreOutput, SnapshotSteps, StreamCore } from "../types.js";
import { STAGE_LATE_PENDING, STAGE_ON_TIME } from "../window-state.js";
import type { SessionConfig } from "./session-config.js";
import {
  COUNTED_ON_TIME,
  endOf,
  isKeyEmpty,
  newSession,
  type KeyState,
  type Lane,
  type Session,
} from "./session-key.js";
import { tidyLanes, type Merge } from "./session-lanes.js";
import { emitSession, retractSession, sessionId, type SessionEmitContext } from "./session-pane.js";
import { encodeSessionSnapshot, encodeSessionSnapshotSteps } from "./session-snapshot.js";
import { dropKey, keyOf, newSessionState, type SessionState } from "./session-state.js";
import { sessionStatus, type SessionStatus } from "./session-status.js";
import { SessionVerdicts } from "./session-verdicts.js";
import { armCompare, armLateFlush, armPurge, armSession, rearmSession } from "./session-timer.js";
import { proxyBefore, SessionTimerQueues, type TimerProxy } from "./session-timer-queues.js";
import {
  compareDue,
  finishSessions,
  fireSessionTimer,
  sessionEarlyTick,
  settleSessionTimer,
  type SessionTriggerContext,
} from "./session-triggers.js";

const NO_SESSIONS: readonly Session[] = Object.freeze([]);

const NO_OUTPUT: CoreOutput = { pane: () => undefined, late: () => undefined };

export class SessionOperator implements StreamCore {
  private readonly driver: InputDriver<TimerProxy>;
  /** Where session timers wait; the driver's queue holds only their proxies. */
  private readonly timers: SessionTimerQueues;
  /** The configured policies, then the hidden bias reference (at referenceIndex). */
  private readonly policies: PolicyState[];
  private readonly referenceIndex: number;
  private readonly emitContexts: SessionEmitContext[];
  private readonly triggers: SessionTriggerContext;
  /** Each policy's verdict on the event being placed. */
  private readonly verdicts: SessionVerdicts;

  constructor(
    readonly config: CoreConfig,
    readonly sessions: Readonly<SessionConfig>,
    readonly state: SessionState = newSessionState(config, sessions),
  ) {
    this.policies = state.clock.policies;
    this.referenceIndex = config.policies.length;
    this.verdicts = new SessionVerdicts(this.policies, sessions);
    this.timers = new SessionTimerQueues(
      this.policies,
      (t, out) => fireSessionTimer(this.triggers, t, out),
      (t) => settleSessionTimer(this.triggers, t),
    );
    this.driver = new InputDriver<TimerProxy>(state.clock, config.idleTimeoutMs, proxyBefore, {
      place: (e, out) => this.place(e, out),
      earlyTick: (p, out) => sessionEarlyTick(this.triggers, p, out),
      fire: (t, out) => this.timers.fireProxy(t, out),
      advanced: () => {
        if (state.services.maintain(state.clock.logTime, config.keyTtlMs))
          state.bias.sweep(state.clock.logTime - config.keyTtlMs);
      },
    });
    this.timers.attach(this.driver);
    this.emitContexts = this.policies.map((p) => this.newEmitContext(p));
    this.triggers = {
      state,
      settings: sessions,
      referenceHorizonMs: config.referenceHorizonMs,
      driver: this.timers,
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
        for (const lane of k.lanes)
          for (const f of lane.sessions)
            for (const i of lane.policies) {
              const s = f.views[i] ?? null;
              if (s !== null) rearmSession(this.timers, this.policies[i] as PolicyState, s, gap);
            }
        for (const p of this.policies)
          if (k.open[p.index] === 0 && Number.isFinite(k.closedUntil[p.index])) armPurge(this.timers, p, k, gap);
      }
    }
    for (const start of this.state.bias.windows.keys())
      armCompare(this.timers, this.referenceIndex, start, compareDue(this.triggers, start));
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

  status(): SessionStatus {
    return sessionStatus(this.config, this.state);
  }

  snapshot(): Uint8Array {
    return encodeSessionSnapshot(this.config, this.sessions, this.state);
  }

  snapshotSteps(): SnapshotSteps {
    return encodeSessionSnapshotSteps(this.config, this.sessions, this.state);
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
    const verdicts = this.verdicts;
    for (const p of this.policies) verdicts.watermarks[p.index] = this.driver.watermarkOf(p);
    const lanes = k.lanes.length;
    for (let i = 0; i < lanes; i++) verdicts.judge(k, k.lanes[i] as Lane, e, period, error);
    if (k.lanes.length > 1) tidyLanes(k);
    // Panes and late records in policy order, as if each policy had placed the event alone.
    let kept = false;
    for (const p of this.policies) {
      const i = p.index;
      const m = verdicts.merged[i];
      if (m === null || m === undefined)
        this.drop(
          p,
          k,
          e,
          verdicts.dropStart[i] as number,
          verdicts.dropEnd[i] as number,
          verdicts.watermarks[i] as number,
          out,
        );
      else {
        verdicts.merged[i] = null;
        this.accept(p, k, m, out);
        kept = true;
      }
    }
    // A policy that kept the event has a session of the key open.
    if (!kept && isKeyEmpty(k)) dropKey(this.state, k);
  }

  /** The policy keeps the event: its view of the merged session, its late-accepted counts, its panes. */
  private accept(p: PolicyState, k: KeyState, m: Merge, out: CoreOutput): void {
    const i = p.index;
    const f = m.target;
    const behind = f.lastTs + this.sessions.gapMs <= (this.verdicts.watermarks[i] as number);
    let s = f.views[i] ?? null;
    if (s === null) {
      // A new session. Opened already behind W: no on-time pane, its panes are late ones (docs/semantics.md, "Late data").
      s = newSession(this.state.nextId++, i, k, f);
      if (behind && emitsOnTime(p)) s.stage = STAGE_ON_TIME;
      f.views[i] = s;
      f.viewers++;
      k.open[i] = (k.open[i] as number) + 1;
      this.state.openSessions++;
    } else s.dirty = true;
    let swallowed: readonly Session[] = NO_SESSIONS;
    if (m.swallowed.length > 0) {
      swallowed = m.swallowed.map((o) => o.views[i] as Session);
      for (const o of swallowed) {
        s.lateAccepted += o.lateAccepted;
        // The merged session was shown on time once already (as the swallowed one): it is not counted again.
        s.stage |= o.stage & COUNTED_ON_TIME;
        o.live = false;
        k.open[i] = (k.open[i] as number) - 1;
        this.state.openSessions--;
      }
      if (i < this.referenceIndex) this.state.merges++;
    }
    if (behind) {
      // One session per event and policy: pairs and events are the same count here.
      p.lateAcceptedWindowEvents++;
      p.lateAcceptedEvents++;
      s.lateAccepted++;
    }
    this.changed(p, s, swallowed, out);
  }

  /** Emits what a change to session s calls for: retractions, a late or early pane, its timers. */
  private changed(p: PolicyState, s: Session, swallowed: readonly Session[], out: CoreOutput): void {
    const ctx = this.emitContext(p, out);
    let retracted = false;
    for (const o of swallowed) if (retractSession(ctx, o)) retracted = true;
    if (s.lastId !== null && s.lastStart !== s.facts.firstTs) retracted = retractSession(ctx, s) || retracted;
    const end = endOf(s, this.sessions.gapMs);
    const behind = end <= ctx.watermark;
    if (!behind) s.stage &= ~STAGE_ON_TIME;
    if (retracted) {
      emitSession(ctx, s, behind ? "late" : "early");
      if (behind) s.stage |= STAGE_ON_TIME;
    } else if (behind && s.stage & STAGE_ON_TIME) this.lateAccepted(p, s);
    armSession(this.timers, p, s, this.sessions.gapMs);
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
    armLateFlush(this.timers, p, s, Math.max(this.state.clock.logTime, s.lastLateAt + every));
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
