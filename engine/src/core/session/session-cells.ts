/**
 * Counting sessions into cells (docs/semantics.md, "Session windows"): a session a policy counts as
 * ended goes into the cell of every window size holding its end; when it changes (a late event
 * extends or bridges it) or opens again, its old contribution is taken back first. A change marks
 * the cell for the policy's next early tick while its window's on-time pane is not out, and for a
 * late pane (at most one per `lateEvery`) after it. Windows are opened with their first cell and
 * their triggers armed (cell-triggers.ts).
 */
import { emitsOnTime, type PolicyState } from "../panes/policy-state.js";
import { KIND_FINAL, KIND_LATE_PENDING, KIND_ON_TIME } from "../windows/window-state.js";
import { scheduleCellWindow } from "./cell-triggers.js";
import { applySession, newCell, newCellWindow, type CellWindow, type SessionCell } from "./cell-window.js";
import { CellTimerKind } from "./session-timers.js";
import { bit, watermarkOf, type SessionContext } from "./session-context.js";

/**
 * Adds (sign 1) or takes back (sign −1) row s for each policy of `policies` (a mask), in every
 * window size. `placed`: the change comes from placing an event now (`late`, a mask: one those
 * policies accepted late), not from a row's timer.
 */
export function countRow(
  ctx: SessionContext,
  s: number,
  policies: number,
  sign: 1 | -1,
  placed = false,
  late = 0,
): void {
  if (policies === 0) return;
  const { slots, keys, clock } = ctx.state;
  const first = slots.first[s] as number;
  const last = slots.last[s] as number;
  const end = last + ctx.settings.gapMs;
  const events = slots.events[s] as number;
  const error = slots.error[s] === 1;
  const service = keys.serviceOf(slots.key[s] as number);
  for (const p of clock.policies) {
    const b = bit(p.index);
    if (!(policies & b)) continue;
    for (let z = 0; z < ctx.state.sizes.length; z++) {
      const cell = cellOf(ctx, p, z, service, end, placed);
      applySession(cell, sign, last - first, events, error);
      if (sign > 0 && late & b) cell.lateAccepted++;
      changed(ctx, p, cell);
    }
  }
}

/** The policy's cell of `service` in the window of size index z holding `end`, created if new. */
function cellOf(
  ctx: SessionContext,
  p: PolicyState,
  z: number,
  service: string,
  end: number,
  placed: boolean,
): SessionCell {
  const sizeMs = ctx.state.sizes[z] as number;
  const start = Math.floor(end / sizeMs) * sizeMs;
  const windows = ctx.state.windows[z] as Map<number, CellWindow>;
  const w = windows.get(start) ?? openCellWindow(ctx, z, start, placed);
  let cells = w.services.get(service);
  if (cells === undefined) w.services.set(service, (cells = new Array(ctx.state.clock.policies.length)));
  return (cells[p.index] ??= newCell(w, service, p.index, ctx.relativeAccuracy));
}

/**
 * A new window, its triggers armed. Opened by placing an event, each policy's kinds are judged by its
 * W now, as the window core judges a new window: behind W it gets no on-time pane (its first session
 * is a late one), behind W + grace none at all. Opened by a row's timer (a session ended at its
 * due), nothing is judged: every trigger already due fires next, in the timers' order, after the
 * timers before it — so it is as if the window had been there all along.
 */
function openCellWindow(ctx: SessionContext, z: number, start: number, placed: boolean): CellWindow {
  const policies = ctx.state.clock.policies;
  const w = newCellWindow(z, start, ctx.state.sizes[z] as number, policies.length);
  const reference = policies.length - 1;
  for (const p of placed ? policies : []) {
    if (p.index === reference) continue;
    const watermark = watermarkOf(ctx, p);
    if (w.end + p.cfg.graceMs <= watermark) {
      w.kinds[p.index] = KIND_ON_TIME | KIND_FINAL;
      w.closed++;
    } else if (w.end <= watermark && emitsOnTime(p)) w.kinds[p.index] = KIND_ON_TIME;
  }
  (ctx.state.windows[z] as Map<number, CellWindow>).set(start, w);
  scheduleCellWindow(ctx, w);
  return w;
}

/** A cell changed: queued for the next early tick before its on-time pane, marked late after it. */
function changed(ctx: SessionContext, p: PolicyState, cell: SessionCell): void {
  const w = cell.window;
  const kinds = w.kinds[p.index] as number;
  if (p.index === ctx.state.early.length || kinds & KIND_FINAL) return;
  if (!(kinds & KIND_ON_TIME)) {
    if (cell.queued || p.cfg.earlyEveryMs === null || !emitsOnTime(p)) return;
    cell.queued = true;
    (ctx.state.early[p.index] as SessionCell[]).push(cell);
    return;
  }
  cell.lateDirty = true;
  const every = p.cfg.lateEveryMs;
  if (every === null || kinds & KIND_LATE_PENDING) return;
  w.kinds[p.index] = kinds | KIND_LATE_PENDING;
  const due = Math.max(ctx.state.clock.logTime, (w.lastLateAt[p.index] as number) + every);
  ctx.driver.atLogTime({ due, kind: CellTimerKind.LateFlush, policy: p.index, configIndex: w.size, start: w.start });
}
