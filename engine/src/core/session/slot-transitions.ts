/**
 * A session row's life after placement (docs/semantics.md, "Session windows"): for each policy
 * holding it, the row is counted into its cells once the policy's W passes its end (ended), and
 * forgotten once W passes end + grace (closed), leaving the key the closed-session bound. A row no
 * policy holds is freed; a key with no row waits until none of its bounds can matter any more
 * (W ≥ bound + 3·gap + grace, docs/decisions/0009-session-windows.md, decision 3) and is freed too.
 * With an event-time policy whose W stops, the key TTL closes a row whose last event is that old.
 *
 * Each row has at most one live timer per clock: the due of its next transition there. A row that
 * grows is not re-armed (its timer fires early, finds nothing due and re-arms): an event costs no
 * heap work unless it makes a transition earlier.
 */
import type { PolicyState } from "../panes/policy-state.js";
import { countRow } from "./session-cells.js";
import { bit, watermarkOf, type SessionContext } from "./session-context.js";
import { NO_KEY } from "./session-keys.js";
import { NO_SLOT } from "./session-slots.js";

/** Due of row s's next transition on `clock` (Infinity: none). */
function rowDue(ctx: SessionContext, s: number, clock: number): number {
  const { slots, clock: c } = ctx.state;
  const mask = slots.mask[s] as number;
  const ended = slots.ended[s] as number;
  const end = (slots.last[s] as number) + ctx.settings.gapMs;
  const clockOf = ctx.timers.clockOf;
  let due = Infinity;
  let eventTime = false;
  for (const p of c.policies) {
    const b = bit(p.index);
    if (!(mask & b)) continue;
    if (clockOf[p.index] !== clock) {
      eventTime = true;
      continue;
    }
    const d = ctx.driver.dueAt(p, ended & b ? end + p.cfg.graceMs : end);
    if (d < due) due = d;
  }
  // A row of a policy on another clock is closed by the key TTL on log time if that clock stops.
  if (clock === 0 && eventTime) due = Math.min(due, end + ctx.keyTtlMs);
  return due;
}

/** Arms row s wherever its next transition moved earlier than its live timer (or it has none). */
export function armRow(ctx: SessionContext, s: number): void {
  const armed = ctx.state.slots.armed;
  for (let clock = 0; clock < armed.length; clock++) {
    const due = rowDue(ctx, s, clock);
    const at = armed[clock] as Float64Array;
    if (due >= (at[s] as number)) continue;
    at[s] = due;
    ctx.timers.arm(clock, s, due);
  }
}

/** A row or key timer popped. */
export function fireSlotTimer(ctx: SessionContext, clock: number, id: number, due: number): void {
  if (id < 0) return fireKey(ctx, -1 - id, due);
  const slots = ctx.state.slots;
  const at = slots.armed[clock] as Float64Array;
  if (at[id] !== due) return;
  at[id] = Infinity;
  transitions(ctx, id, clock);
  if (slots.mask[id] === 0) return;
  const next = rowDue(ctx, id, clock);
  if (next === Infinity) return;
  at[id] = next;
  ctx.timers.arm(clock, id, next);
}

/** The row's transitions due now for the policies on `clock` (all policies when the TTL closes it). */
function transitions(ctx: SessionContext, s: number, clock: number): void {
  const { slots, clock: c } = ctx.state;
  const end = (slots.last[s] as number) + ctx.settings.gapMs;
  const ttl = clock === 0 && end + ctx.keyTtlMs <= c.logTime;
  for (const p of c.policies) {
    const b = bit(p.index);
    if (!((slots.mask[s] as number) & b) || (!ttl && ctx.timers.clockOf[p.index] !== clock)) continue;
    const watermark = watermarkOf(ctx, p);
    if (!((slots.ended[s] as number) & b) && (ttl || end <= watermark)) {
      slots.ended[s] = ((slots.ended[s] as number) | b) >>> 0;
      countRow(ctx, s, b, 1);
    }
    if ((slots.ended[s] as number) & b && (ttl || end + p.cfg.graceMs <= watermark)) closeRow(ctx, p, s);
  }
  if (slots.mask[s] === 0) removeRow(ctx, s);
}

/** Policy p forgets row s: the key keeps the bound of its closed sessions. */
export function closeRow(ctx: SessionContext, p: PolicyState, s: number): void {
  const { slots, keys } = ctx.state;
  const b = bit(p.index);
  slots.mask[s] = ((slots.mask[s] as number) & ~b) >>> 0;
  slots.ended[s] = ((slots.ended[s] as number) & ~b) >>> 0;
  const at = (slots.key[s] as number) * keys.policies + p.index;
  keys.closed[at] = Math.max(keys.closed[at] as number, slots.last[s] as number);
}

/** Unlinks and frees a row no policy holds; a key left with no row waits for its purge. */
export function removeRow(ctx: SessionContext, s: number): void {
  const k = unlinkRow(ctx, s);
  ctx.state.slots.release(s);
  if (ctx.state.keys.head[k] === NO_SLOT) settleKey(ctx, k);
}

/** Takes row s out of its key's list; returns the key. */
export function unlinkRow(ctx: SessionContext, s: number): number {
  const { slots, keys } = ctx.state;
  const k = slots.key[s] as number;
  let prev = NO_SLOT;
  for (let r = keys.head[k] as number; r !== s; r = slots.next[r] as number) prev = r;
  if (prev === NO_SLOT) keys.head[k] = slots.next[s] as number;
  else slots.next[prev] = slots.next[s] as number;
  return k;
}

/**
 * A key without rows: freed when no bound can matter any more, else its purge is armed at the
 * latest moment one still could (on log time; an event-time policy's bound is looked at again a
 * gap later).
 */
export function settleKey(ctx: SessionContext, k: number): void {
  if (k === NO_KEY) return;
  const keys = ctx.state.keys;
  const gap = ctx.settings.gapMs;
  let due = -Infinity;
  for (const p of ctx.state.clock.policies) {
    const at = k * keys.policies + p.index;
    const bound = keys.closed[at] as number;
    if (bound === -Infinity) continue;
    if (watermarkOf(ctx, p) >= bound + 3 * gap + p.cfg.graceMs) {
      keys.closed[at] = -Infinity;
      continue;
    }
    const d = p.eventTime ? ctx.state.clock.logTime + gap : ctx.driver.dueAt(p, bound + 3 * gap + p.cfg.graceMs);
    if (d > due) due = d;
  }
  if (due === -Infinity) {
    keys.release(k);
    return;
  }
  if (due >= (keys.armed[k] as number)) return;
  keys.armed[k] = due;
  ctx.timers.arm(0, -1 - k, due);
}

function fireKey(ctx: SessionContext, k: number, due: number): void {
  const keys = ctx.state.keys;
  if (keys.armed[k] !== due) return;
  keys.armed[k] = Infinity;
  if (keys.head[k] === NO_SLOT) settleKey(ctx, k);
}

/** End of input: every row ends and closes for every policy holding it (finish()). */
export function closeEveryRow(ctx: SessionContext): void {
  const slots = ctx.state.slots;
  for (let s = 0; s < slots.top; s++) {
    if (slots.mask[s] === 0) continue;
    for (const p of ctx.state.clock.policies) {
      const b = bit(p.index);
      if (!((slots.mask[s] as number) & b)) continue;
      if (!((slots.ended[s] as number) & b)) {
        slots.ended[s] = ((slots.ended[s] as number) | b) >>> 0;
        countRow(ctx, s, b, 1);
      }
      closeRow(ctx, p, s);
    }
    unlinkRow(ctx, s);
    slots.release(s);
  }
}
