/**
 * Triggers of session cells (docs/semantics.md, "Session windows"), as the window core's are for
 * windows: a policy's early tick emits the cells changed since its last one whose window's on-time
 * pane is not out; the on-time pane at W ≥ end (with grace 0 also the final); late panes after it,
 * at most one per `lateEvery`, for cells changed since; the final at W ≥ end + grace, after which
 * the policy forgets the window; and the reference closing the window at the horizon, which
 * measures every policy's bias there. A window is released once every policy and the reference
 * have closed it. Every session that ended by a trigger's moment is counted before it fires
 * (session-timers.ts).
 */
import { emitsOnTime, hasFinalPane, type PolicyState } from "../panes/policy-state.js";
import type { WindowTimer } from "../windows/window-timer.js";
import { KIND_FINAL, KIND_LATE_PENDING, KIND_ON_TIME } from "../windows/window-state.js";
import { emitCell, type Emitted } from "./cell-panes.js";
import type { CellWindow, SessionCell } from "./cell-window.js";
import { SessionDials } from "./session-bias.js";
import { watermarkOf, type SessionContext } from "./session-context.js";
import { CellTimerKind } from "./session-timers.js";

/** Arms every pending trigger of a window (also how queues are rebuilt on restore). */
export function scheduleCellWindow(ctx: SessionContext, w: CellWindow): void {
  const driver = ctx.driver;
  const policies = ctx.state.clock.policies;
  const reference = policies.length - 1;
  const at = { configIndex: w.size, start: w.start };
  for (const p of policies) {
    if (p.index === reference) continue;
    const kinds = w.kinds[p.index] as number;
    if (kinds & KIND_FINAL) continue;
    const policy = p.index;
    if (emitsOnTime(p) && !(kinds & KIND_ON_TIME))
      driver.atWatermark(p, { due: driver.dueAt(p, w.end), kind: CellTimerKind.OnTime, policy, ...at });
    if (hasFinalPane(p))
      driver.atWatermark(p, { due: driver.dueAt(p, w.end + p.cfg.graceMs), kind: CellTimerKind.Final, policy, ...at });
    if (kinds & KIND_LATE_PENDING && p.cfg.lateEveryMs !== null) {
      const due = (w.lastLateAt[policy] as number) + p.cfg.lateEveryMs;
      driver.atLogTime({ due, kind: CellTimerKind.LateFlush, policy, ...at });
    }
  }
  if (!((w.kinds[reference] as number) & KIND_FINAL)) {
    const due = w.end + ctx.referenceHorizonMs;
    driver.atLogTime({ due, kind: CellTimerKind.Reference, policy: reference, ...at });
  }
}

/** A cell-window timer came due. */
export function fireCellTimer(ctx: SessionContext, t: WindowTimer): void {
  const w = ctx.state.windows[t.configIndex]?.get(t.start);
  if (w === undefined) return;
  const policies = ctx.state.clock.policies;
  if (t.kind === CellTimerKind.Reference) return referenceClose(ctx, w);
  const p = policies[t.policy] as PolicyState;
  if ((w.kinds[p.index] as number) & KIND_FINAL) return;
  if (t.kind === CellTimerKind.OnTime) onTime(ctx, p, w);
  else if (t.kind === CellTimerKind.Final) finalPane(ctx, p, w);
  else lateFlush(ctx, p, w);
}

/** Early panes of the policy's cells changed since its last tick, whose window's on-time pane is not out. */
export function earlyTick(ctx: SessionContext, p: PolicyState): void {
  const queue = ctx.state.early[p.index] as SessionCell[];
  if (queue.length === 0) return;
  ctx.state.early[p.index] = [];
  const watermark = watermarkOf(ctx, p);
  for (const c of queue) {
    c.queued = false;
    const w = c.window;
    if (!c.changed || w.end <= watermark || (w.kinds[p.index] as number) & KIND_ON_TIME) continue;
    if (ctx.state.windows[w.size]?.get(w.start) !== w) continue;
    emitCell(ctx.emit, p, c, "early");
  }
}

function emitAll(ctx: SessionContext, p: PolicyState, w: CellWindow, kind: Emitted): void {
  for (const cells of w.services.values()) {
    const c = cells[p.index];
    if (c === undefined || (kind === "late" && !c.lateDirty)) continue;
    emitCell(ctx.emit, p, c, kind);
  }
}

function lateFlush(ctx: SessionContext, p: PolicyState, w: CellWindow): void {
  w.kinds[p.index] = (w.kinds[p.index] as number) & ~KIND_LATE_PENDING;
  w.lastLateAt[p.index] = ctx.state.clock.logTime;
  emitAll(ctx, p, w, "late");
}

/** The on-time pane (W ≥ end); with grace 0 it is also the policy's final. */
function onTime(ctx: SessionContext, p: PolicyState, w: CellWindow): void {
  if ((w.kinds[p.index] as number) & KIND_ON_TIME) return;
  w.kinds[p.index] = (w.kinds[p.index] as number) | KIND_ON_TIME;
  emitAll(ctx, p, w, "on-time");
  p.emitDelaySum += ctx.state.clock.logTime - w.end;
  p.emitDelayCount++;
  if (!hasFinalPane(p)) close(ctx, p, w);
}

/** The final pane (W ≥ end + grace): the policy forgets the window. */
function finalPane(ctx: SessionContext, p: PolicyState, w: CellWindow): void {
  emitAll(ctx, p, w, "final");
  if (!emitsOnTime(p)) {
    p.emitDelaySum += ctx.state.clock.logTime - w.end;
    p.emitDelayCount++;
  }
  close(ctx, p, w);
}

function close(ctx: SessionContext, p: PolicyState, w: CellWindow): void {
  w.kinds[p.index] = ((w.kinds[p.index] as number) | KIND_ON_TIME | KIND_FINAL) & ~KIND_LATE_PENDING;
  w.closed++;
  if (w.ref !== null) ctx.state.dials.measure(w, p, ctx.state.clock.logTime);
  if (w.closed === w.kinds.length) free(ctx, w);
}

/** The reference closes the window: its values are what every policy's bias there is measured against. */
function referenceClose(ctx: SessionContext, w: CellWindow): void {
  const policies = ctx.state.clock.policies;
  const reference = policies.length - 1;
  if ((w.kinds[reference] as number) & KIND_FINAL) return;
  w.ref = SessionDials.referenceOf(w, reference);
  w.kinds[reference] = KIND_FINAL;
  w.closed++;
  for (const p of policies)
    if (p.index !== reference && (w.kinds[p.index] as number) & KIND_FINAL)
      ctx.state.dials.measure(w, p, ctx.state.clock.logTime);
  if (w.closed === w.kinds.length) free(ctx, w);
}

function free(ctx: SessionContext, w: CellWindow): void {
  ctx.state.windows[w.size]?.delete(w.start);
}

/** End of input: every window's pending on-time, final and reference close, in size and start order. */
export function finishCells(ctx: SessionContext): void {
  const policies = ctx.state.clock.policies;
  const reference = policies.length - 1;
  for (const windows of ctx.state.windows)
    for (const start of [...windows.keys()].sort((a, b) => a - b)) {
      const w = windows.get(start) as CellWindow;
      for (const p of policies) {
        if (p.index === reference || (w.kinds[p.index] as number) & KIND_FINAL) continue;
        if (emitsOnTime(p) && !((w.kinds[p.index] as number) & KIND_ON_TIME)) onTime(ctx, p, w);
        if (!((w.kinds[p.index] as number) & KIND_FINAL)) finalPane(ctx, p, w);
      }
      referenceClose(ctx, w);
    }
}
