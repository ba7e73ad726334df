/**
 * Session panes (docs/semantics.md, "Session windows"). Id
 * `<policy>|session:<service>/<user>|<gapMs>|<firstTs>` (service and user URI-escaped, so the
 * "session:" prefix and the separators are unambiguous). Value: count = requests, errors,
 * errorRate, users = 1, quantiles 0 (a session keeps no latency sketch); the `session` block holds
 * duration and first/last route. Modes as for windows: accumulating carries the full value,
 * discarding the delta of count and errors since the session's last pane, retracting a `retract`
 * of the last pane before the new one. A session that disappears (swallowed by a merge, or whose
 * first event moved earlier) gets a `retract` of its last pane in every mode.
 */
import type { Pane, PaneBias, PaneKind, PaneSession, PaneValue } from "../../../../protocol.js";
import { SLOT_FINAL, SLOT_LATE, SLOT_ON_TIME } from "../../../stage-slot.js";
import type { AccumulationMode, CoreOutput } from "../../../types.js";
import type { EmittedSession, Session } from "./session-key.js";

export interface SessionEmitContext {
  policy: string;
  mode: AccumulationMode;
  gapMs: number;
  watermark: number;
  logTime: number;
  dropped: number;
  /** The policy's measured bias of a service at a stage slot (-1: early). */
  biasOf(service: string, slot: number): PaneBias;
  /** Next pane seq of the policy (monotone per policy, hence per id). */
  nextSeq(): number;
  out: CoreOutput;
}

/** The stage slot of a session pane (-1: early, which sessions do not measure). */
function slotOfKind(kind: Exclude<PaneKind, "retract">): number {
  return kind === "early" ? -1 : kind === "on-time" ? SLOT_ON_TIME : kind === "late" ? SLOT_LATE : SLOT_FINAL;
}

/** A session's id (its panes' id, and a late record's `session`): `<policy>|session:<keyId>|<gapMs>|<first ts>`. */
export function sessionId(policy: string, keyId: string, gapMs: number, start: number): string {
  return `${policy}|session:${keyId}|${gapMs}|${start}`;
}

function valueOf(count: number, errors: number, users: number): PaneValue {
  return { count, errors, errorRate: count === 0 ? 0 : errors / count, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, users };
}

function pane(ctx: SessionEmitContext, s: Session, kind: PaneKind, e: EmittedSession, value: PaneValue): Pane {
  return {
    id: sessionId(ctx.policy, s.key.keyId, ctx.gapMs, e.start),
    seq: ctx.nextSeq(),
    kind,
    policy: ctx.policy,
    key: { service: s.key.service, user: s.key.user },
    window: { start: e.start, end: e.end },
    value,
    watermark: ctx.watermark,
    emittedAt: ctx.logTime,
    emitDelayMs: ctx.logTime - e.end,
    pipelineLagMs: 0,
    lateAccepted: s.lateAccepted,
    dropped: ctx.dropped,
    bias: ctx.biasOf(s.key.service, kind === "retract" ? e.slot : slotOfKind(kind)),
    session: e.session,
  };
}

/** Takes back the session's last pane (its id as then emitted); no-op if it never emitted. */
export function retractSession(ctx: SessionEmitContext, s: Session): boolean {
  const last = s.last;
  if (last === null) return false;
  ctx.out.pane(pane(ctx, s, "retract", last, last.value));
  s.last = null;
  return true;
}

/** Emits the session's current state as a pane of `kind`, per the policy's mode. */
export function emitSession(ctx: SessionEmitContext, s: Session, kind: Exclude<PaneKind, "retract">): void {
  if (s.last !== null && s.last.start !== s.firstTs) retractSession(ctx, s);
  const session: PaneSession = { durationMs: s.lastTs - s.firstTs, firstRoute: s.firstRoute, lastRoute: s.lastRoute };
  const now: EmittedSession = {
    value: valueOf(s.count, s.errors, 1),
    slot: slotOfKind(kind),
    start: s.firstTs,
    end: s.lastTs + ctx.gapMs,
    session,
  };
  const last = s.last;
  if (ctx.mode === "discarding") {
    const delta = last === null ? now.value : valueOf(s.count - last.value.count, s.errors - last.value.errors, 0);
    ctx.out.pane(pane(ctx, s, kind, now, delta));
  } else {
    if (ctx.mode === "retracting" && last !== null) ctx.out.pane(pane(ctx, s, "retract", last, last.value));
    ctx.out.pane(pane(ctx, s, kind, now, now.value));
  }
  s.last = now;
  s.dirty = false;
}
