/**
 * The session operator's timers in its input driver's queue (docs/decisions/0034-sessions-at-scale.md):
 * cell-window timers (a policy's late flush, on-time and final, the reference closing a window) are
 * the window core's shape (window-timer.ts, the window size index in `configIndex`); the session
 * rows' and keys' timers wait in one DueCalendar per clock (slot-timers.ts) behind a proxy. A proxy's
 * kind sorts first at its due, so every session that ends at or before a moment is counted before
 * any pane of that moment is emitted.
 */
import { compareTimers, type Timer } from "../windows/timer-queue.js";
import { coreTimerBefore, WindowTimerKind, type CoreTimer } from "../windows/window-timer.js";

/** Kind of a slot-heap proxy: before every other kind at the same due. */
export const PROXY_KIND = -1;

export const CellTimerKind = WindowTimerKind;

/** A heap's stand-in in the driver's queue (`policy` is the clock index). */
export interface SlotProxy extends Timer {
  due: number;
  readonly kind: typeof PROXY_KIND;
  readonly policy: number;
}

export type SessionTimer = CoreTimer | SlotProxy;

/** The total order: (due, kind, policy), then a window timer's size index and start. */
export function sessionTimerBefore(a: SessionTimer, b: SessionTimer): boolean {
  if (a.kind === PROXY_KIND || b.kind === PROXY_KIND) return compareTimers(a, b) < 0;
  return coreTimerBefore(a, b);
}
