/**
 * A session cell's panes (docs/semantics.md, "Session windows"), per accumulation mode as for
 * windows: accumulating carries the whole value, retracting a `retract` of the previous value
 * before the new one, final-only only the final, discarding the change of `count`, `errors` and
 * `sessions.events` since the cell's last pane (the quantiles and error share stay those of the
 * whole cell: a difference of two duration sketches has no quantiles). Id
 * `<policy>|sessions:<service>|<windowMs>|<start>`, key `{ service, user: "*" }`.
 */
import type { Pane, PaneBias, PaneKind, PaneValue } from "../../protocol.js";
import { biasFor, type PolicyDial } from "../dial/policy-dial.js";
import { hasFinalPane, type PolicyState } from "../panes/policy-state.js";
import { newKindPoints, recordPoint } from "../panes/kind-points.js";
import { SLOT_FINAL, SLOT_ON_TIME, slotOf } from "../panes/kind-slot.js";
import type { CoreOutput } from "../types.js";
import { keyIdOf } from "../windows/window-state.js";
import { cellValue, type SessionCell } from "./cell-window.js";

/** The user of every session pane: all users of the service. */
export const ALL_USERS = "*";

export type Emitted = Exclude<PaneKind, "retract">;

/** What emitting a cell's pane needs of the operator. */
export interface CellEmitContext {
  readonly logTime: number;
  readonly out: CoreOutput;
  watermarkOf(p: PolicyState): number;
  /** The policy's session dial of a window size (session-bias.ts). */
  dialOf(p: PolicyState, size: number): PolicyDial;
  sizeMs(size: number): number;
}

/** The id of a session cell's panes. */
export function cellPaneId(policy: string, service: string, sizeMs: number, start: number): string {
  return `${policy}|sessions:${keyIdOf(service, undefined)}|${sizeMs}|${start}`;
}

/** Emits the cell's pane(s) of `kind` for policy p, and records what it showed for the bias. */
export function emitCell(ctx: CellEmitContext, p: PolicyState, c: SessionCell, kind: Emitted): void {
  const w = c.window;
  const slot = slotOf(kind, w.start, w.end, ctx.logTime, p.cfg.earlyEveryMs);
  const dial = ctx.dialOf(p, w.size);
  const full = cellValue(c);
  const delay = ctx.logTime - w.end;
  record(dial, slot, delay);
  const points = (c.points ??= newKindPoints());
  recordPoint(points, slot, full, null);
  if (slot === SLOT_ON_TIME && !hasFinalPane(p)) {
    record(dial, SLOT_FINAL, delay);
    recordPoint(points, SLOT_FINAL, full, null);
  }
  const pane = paneOf(ctx, p, c, ctx.sizeMs(w.size));
  const bias = biasFor(dial, c.service, slot);
  if (p.cfg.mode === "discarding") {
    const last = c.last;
    const value = { ...full, count: full.count - (last?.count ?? 0), errors: full.errors - (last?.errors ?? 0) };
    ctx.out.pane(pane(kind, value, c.events - c.lastEvents, bias));
  } else {
    if (p.cfg.mode === "retracting" && c.last !== null)
      ctx.out.pane(pane("retract", c.last, c.lastEvents, biasFor(dial, c.service, c.lastSlot)));
    ctx.out.pane(pane(kind, full, c.events, bias));
  }
  c.last = full;
  c.lastEvents = c.events;
  c.lastSlot = slot;
  c.changed = false;
  c.lateDirty = false;
}

function record(dial: PolicyDial, slot: number, delayMs: number): void {
  dial.emitDelaySum[slot] = (dial.emitDelaySum[slot] as number) + delayMs;
  dial.emitDelayCount[slot] = (dial.emitDelayCount[slot] as number) + 1;
}

type PaneOf = (kind: PaneKind, value: PaneValue, events: number, bias: PaneBias) => Pane;

function paneOf(ctx: CellEmitContext, p: PolicyState, c: SessionCell, sizeMs: number): PaneOf {
  const w = c.window;
  const id = cellPaneId(p.cfg.name, c.service, sizeMs, w.start);
  const watermark = ctx.watermarkOf(p);
  return (kind, value, events, bias) => ({
    id,
    seq: c.seq++,
    kind,
    policy: p.cfg.name,
    key: { service: c.service, user: ALL_USERS },
    window: { start: w.start, end: w.end },
    value,
    watermark,
    emittedAt: ctx.logTime,
    emitDelayMs: ctx.logTime - w.end,
    pipelineLagMs: 0,
    lateAccepted: c.lateAccepted,
    dropped: p.droppedWindowEvents,
    bias,
    sessions: { events },
  });
}
