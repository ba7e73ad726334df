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
import type { Pane, PaneBias, PaneKind, PaneSession, PaneValue } from "../../protocol.js";
import { SLOT_FINAL, SLOT_LATE, SLOT_ON_TIME } from "../stage-slot.js";
import type { AccumulationMode, CoreOutput } from "../types.js";
import type { Session } from "./session-key.js";

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

export function valueOf(count: number, errors: number, users: number): PaneValue {
  return { count, errors, errorRate: count === 0 ? 0 : errors / count, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, users };
}

function pane(
  ctx: SessionEmitContext,
  s: Session,
  kind: PaneKind,
  id: string,
  slot: number,
  window: Pane["window"],
  value: PaneValue,
  session: PaneSession,
): Pane {
  return {
    id,
    seq: ctx.nextSeq(),
    kind,
    policy: ctx.policy,
    key: s.key.paneKey,
    window,
    value,
    watermark: ctx.watermark,
    emittedAt: ctx.logTime,
    emitDelayMs: ctx.logTime - window.end,
    pipelineLagMs: 0,
    lateAccepted: s.lateAccepted,
    dropped: ctx.dropped,
    bias: ctx.biasOf(s.key.service, slot),
    session,
  };
}

/** The retraction of the session's last pane: same id, window, value (its full value) and session block. */
function retraction(ctx: SessionEmitContext, s: Session): Pane {
  const window = { start: s.lastStart, end: s.lastEnd };
  const session = { durationMs: s.lastDurationMs, firstRoute: s.lastFirstRoute, lastRoute: s.lastLastRoute };
  const value = valueOf(s.lastCount, s.lastErrors, 1);
  return pane(ctx, s, "retract", s.lastId as string, s.lastSlot, window, value, session);
}

/** Takes back the session's last pane (its id as then emitted); no-op if it never emitted. */
export function retractSession(ctx: SessionEmitContext, s: Session): boolean {
  if (s.lastId === null) return false;
  ctx.out.pane(retraction(ctx, s));
  s.lastId = null;
  return true;
}

/** Emits the session's current state as a pane of `kind`, per the policy's mode. */
export function emitSession(ctx: SessionEmitContext, s: Session, kind: Exclude<PaneKind, "retract">): void {
  const f = s.facts;
  if (s.lastId !== null && s.lastStart !== f.firstTs) retractSession(ctx, s);
  const had = s.lastId !== null;
  // The id depends on the start only: built once per session start, not per pane.
  const id = had ? (s.lastId as string) : sessionId(ctx.policy, s.key.keyId, ctx.gapMs, f.firstTs);
  const slot = slotOfKind(kind);
  const window = { start: f.firstTs, end: f.lastTs + ctx.gapMs };
  const session: PaneSession = { durationMs: f.lastTs - f.firstTs, firstRoute: f.firstRoute, lastRoute: f.lastRoute };
  const value = valueOf(f.count, f.errors, 1);
  if (ctx.mode === "discarding") {
    const delta = had ? valueOf(f.count - s.lastCount, f.errors - s.lastErrors, 0) : value;
    ctx.out.pane(pane(ctx, s, kind, id, slot, window, delta, session));
  } else {
    if (ctx.mode === "retracting" && had) ctx.out.pane(retraction(ctx, s));
    ctx.out.pane(pane(ctx, s, kind, id, slot, window, value, session));
  }
  s.lastId = id;
  s.lastSlot = slot;
  s.lastStart = window.start;
  s.lastEnd = window.end;
  s.lastCount = f.count;
  s.lastErrors = f.errors;
  s.lastDurationMs = session.durationMs;
  s.lastFirstRoute = f.firstRoute;
  s.lastLastRoute = f.lastRoute;
  s.dirty = false;
}
