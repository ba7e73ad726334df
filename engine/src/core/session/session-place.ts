/**
 * Placing an event into the sessions of its (service, user) key, for every policy at once
 * (docs/semantics.md, "Session windows"; docs/decisions/0034-sessions-at-scale.md). Per policy: the
 * sessions it holds that the event touches (same length-cap period, first − gap < ts < last + gap),
 * their union with the event, and the verdict — dropped when the union's end + grace ≤ W or the
 * event falls within a gap after a session the policy closed, late-accepted when the end ≤ W, else on
 * time. Usually every policy keeps the event and touches the same rows: one pass joins those rows
 * (splitting off the part of a row some other policy holds), absorbs the event and re-counts it for
 * the policies that already count it as ended. Otherwise each keeping policy is placed on its own
 * rows, and rows that came out identical are joined again.
 */
import { isError, type LateRecord, type TelemetryEvent } from "../../protocol.js";
import type { PolicyState } from "../panes/policy-state.js";
import { keyIdOf } from "../windows/window-state.js";
import { countRow } from "./session-cells.js";
import { bit, watermarkOf, type SessionContext } from "./session-context.js";
import { NO_KEY } from "./session-keys.js";
import { NO_SLOT } from "./session-slots.js";
import { armRow, settleKey, unlinkRow } from "./slot-transitions.js";

/** Rows of one key looked at in one pass (bits of a mask). */
const MAX_ROWS = 31;
/** Policies (the reference included) sessions support: each touches at most two rows, all within one pass. */
export const MAX_SESSION_POLICIES = 15;

/** Per-event scratch: the key's rows in list order, and each policy's verdict. */
const rows = new Int32Array(MAX_ROWS);
const touched = new Uint32Array(32);

export function placeEvent(ctx: SessionContext, e: TelemetryEvent): void {
  const state = ctx.state;
  if (e.user === "") {
    state.anonymous++;
    return;
  }
  // Past the service cap, a service's users share the keys of service "(other)" (docs/semantics.md, "Windows").
  const service = state.services.service(e.service, state.clock.logTime);
  const k = state.keys.find(service, e.user);
  if (k === NO_KEY) {
    state.overflowEvents++;
    return;
  }
  const ts = e.ts;
  const period = Math.floor(ts / ctx.settings.maxLengthMs);
  const n = listTouchedFirst(ctx, k, ts, period);
  let keep = 0;
  let late = 0;
  let shared = -1;
  let uniform = true;
  for (const p of state.clock.policies) {
    const v = judge(ctx, p, k, n, ts, period, e);
    if (v < 0) continue;
    const b = bit(p.index);
    keep = (keep | b) >>> 0;
    if (v & 1) late = (late | b) >>> 0;
    const t = touched[p.index] as number;
    if (shared === -1) shared = t;
    else if (t !== shared) uniform = false;
  }
  if (keep === 0) {
    if (state.keys.head[k] === NO_SLOT) settleKey(ctx, k);
    return;
  }
  const error = isError(e.status);
  if (uniform) keepEvent(ctx, k, keep, shared, ts, error, late);
  else placeApart(ctx, k, keep, ts, period, error, late);
}

/**
 * Lists the key's rows into `rows`; returns how many it has, at most MAX_ROWS. A key with more rows
 * (many sessions open at once, e.g. events far apart in event time) first has the rows the event
 * touches moved to the front of its list, so the pass sees them: at most two per policy, and at most
 * MAX_SESSION_POLICIES policies (validated).
 */
function listTouchedFirst(ctx: SessionContext, k: number, ts: number, period: number): number {
  const n = listRows(ctx, k);
  if (n <= MAX_ROWS) return n;
  const { slots, keys } = ctx.state;
  const gap = ctx.settings.gapMs;
  for (let s = keys.head[k] as number; s !== NO_SLOT;) {
    const next = slots.next[s] as number;
    const f = slots.first[s] as number;
    const hit =
      Math.floor(f / ctx.settings.maxLengthMs) === period && f - gap < ts && ts < (slots.last[s] as number) + gap;
    if (hit && keys.head[k] !== s) {
      unlinkRow(ctx, s);
      slots.next[s] = keys.head[k] as number;
      keys.head[k] = s;
    }
    s = next;
  }
  listRows(ctx, k);
  return MAX_ROWS;
}

/** Lists the key's rows into `rows` (the first MAX_ROWS); returns how many it has. */
function listRows(ctx: SessionContext, k: number): number {
  const next = ctx.state.slots.next;
  let n = 0;
  for (let s = ctx.state.keys.head[k] as number; s !== NO_SLOT; s = next[s] as number) {
    if (n < MAX_ROWS) rows[n] = s;
    n++;
  }
  return n;
}

/** The rows of `rows[0..n)` policy p holds that ts touches, as a bit mask of positions. */
function touchedBy(ctx: SessionContext, p: number, n: number, ts: number, period: number): number {
  const { first, last, mask } = ctx.state.slots;
  const gap = ctx.settings.gapMs;
  const cap = ctx.settings.maxLengthMs;
  const b = bit(p);
  let t = 0;
  for (let i = 0; i < n; i++) {
    const s = rows[i] as number;
    if (!((mask[s] as number) & b)) continue;
    const f = first[s] as number;
    if (Math.floor(f / cap) !== period || f - gap >= ts || ts >= (last[s] as number) + gap) continue;
    t |= 1 << i;
  }
  return t >>> 0;
}

/**
 * Policy p's verdict: −1 dropped (recorded), 1 late-accepted, 0 on time. Leaves the touched rows in
 * `touched[p]`.
 */
function judge(
  ctx: SessionContext,
  p: PolicyState,
  k: number,
  n: number,
  ts: number,
  period: number,
  e: TelemetryEvent,
): number {
  const t = touchedBy(ctx, p.index, n, ts, period);
  touched[p.index] = t;
  let lo = ts;
  let hi = ts;
  for (let i = 0; i < n; i++) {
    if (!(t & (1 << i))) continue;
    const s = rows[i] as number;
    lo = Math.min(lo, ctx.state.slots.first[s] as number);
    hi = Math.max(hi, ctx.state.slots.last[s] as number);
  }
  const end = hi + ctx.settings.gapMs;
  const watermark = watermarkOf(ctx, p);
  if (end + p.cfg.graceMs <= watermark || boundBlocks(ctx, p, k, ts, period)) {
    drop(ctx, p, k, e, lo, end, watermark);
    return -1;
  }
  if (end > watermark) return 0;
  p.lateAcceptedWindowEvents++;
  p.lateAcceptedEvents++;
  return 1;
}

/** The event lies within a gap after a session the policy already closed (same cap period). */
function boundBlocks(ctx: SessionContext, p: PolicyState, k: number, ts: number, period: number): boolean {
  const keys = ctx.state.keys;
  const bound = keys.closed[k * keys.policies + p.index] as number;
  return (
    bound > -Infinity && Math.floor(bound / ctx.settings.maxLengthMs) === period && ts < bound + ctx.settings.gapMs
  );
}

function drop(
  ctx: SessionContext,
  p: PolicyState,
  k: number,
  e: TelemetryEvent,
  start: number,
  end: number,
  watermark: number,
): void {
  p.droppedWindowEvents++;
  p.droppedEvents++;
  if (p.index === ctx.state.early.length) return;
  const keys = ctx.state.keys;
  const keyId = keyIdOf(keys.serviceOf(k), keys.user[k]);
  const rec: LateRecord = {
    policy: p.cfg.name,
    reason: "behind-watermark",
    event: e,
    window: { start, end },
    watermark,
    session: `${p.cfg.name}|session:${keyId}|${ctx.settings.gapMs}|${start}`,
  };
  ctx.out.late(rec);
}

/**
 * The policies of `g` keep the event and touch the same rows (positions `t` of `rows`): those rows
 * become one, holding exactly g, with the event in it; `late` ⊇ the policies for which its end is
 * already behind W (it counts as ended for them at once).
 */
function keepEvent(
  ctx: SessionContext,
  k: number,
  g: number,
  t: number,
  ts: number,
  error: boolean,
  late: number,
): void {
  const slots = ctx.state.slots;
  if (t === 0) {
    const s = slots.alloc();
    slots.first[s] = ts;
    slots.last[s] = ts;
    slots.events[s] = 1;
    slots.error[s] = error ? 1 : 0;
    slots.mask[s] = g;
    slots.key[s] = k;
    slots.next[s] = ctx.state.keys.head[k] as number;
    ctx.state.keys.head[k] = s;
    settleRow(ctx, s, (late & g) >>> 0);
    return;
  }
  let target = NO_SLOT;
  let joined = 0;
  for (let i = 0; i < MAX_ROWS; i++) {
    if (!(t & (1 << i))) continue;
    const s = rows[i] as number;
    if ((slots.mask[s] as number) & ~g) splitRow(ctx, s, g);
    countRow(ctx, s, slots.ended[s] as number, -1, true);
    if (target === NO_SLOT) target = s;
    else {
      absorbRow(ctx, target, s);
      joined++;
    }
  }
  if (joined > 0 && g & ~bit(ctx.state.early.length)) ctx.state.joins++;
  slots.first[target] = Math.min(slots.first[target] as number, ts);
  slots.last[target] = Math.max(slots.last[target] as number, ts);
  slots.events[target] = (slots.events[target] as number) + 1;
  if (error) slots.error[target] = 1;
  settleRow(ctx, target, (late & g) >>> 0);
}

/** The row's ended policies are now exactly `ended` (counted again, as late changes), and its timers follow. */
function settleRow(ctx: SessionContext, s: number, ended: number): void {
  ctx.state.slots.ended[s] = ended;
  countRow(ctx, s, ended, 1, true, ended);
  armRow(ctx, s);
}

/** Row s keeps only the policies of g; the others go on in a copy right after it. */
function splitRow(ctx: SessionContext, s: number, g: number): void {
  const slots = ctx.state.slots;
  const c = slots.alloc();
  slots.first[c] = slots.first[s] as number;
  slots.last[c] = slots.last[s] as number;
  slots.events[c] = slots.events[s] as number;
  slots.error[c] = slots.error[s] as number;
  slots.mask[c] = ((slots.mask[s] as number) & ~g) >>> 0;
  slots.ended[c] = ((slots.ended[s] as number) & ~g) >>> 0;
  slots.key[c] = slots.key[s] as number;
  slots.next[c] = slots.next[s] as number;
  slots.next[s] = c;
  slots.mask[s] = ((slots.mask[s] as number) & g) >>> 0;
  slots.ended[s] = ((slots.ended[s] as number) & g) >>> 0;
  armRow(ctx, c);
}

/** Folds row s (already taken out of the cells) into target and frees it. */
function absorbRow(ctx: SessionContext, target: number, s: number): void {
  const slots = ctx.state.slots;
  slots.first[target] = Math.min(slots.first[target] as number, slots.first[s] as number);
  slots.last[target] = Math.max(slots.last[target] as number, slots.last[s] as number);
  slots.events[target] = (slots.events[target] as number) + (slots.events[s] as number);
  if (slots.error[s] === 1) slots.error[target] = 1;
  unlinkRow(ctx, s);
  slots.release(s);
}

/** Policies keep the event on different rows: each is placed on its own, then identical rows are joined. */
function placeApart(
  ctx: SessionContext,
  k: number,
  keep: number,
  ts: number,
  period: number,
  error: boolean,
  late: number,
): void {
  for (const p of ctx.state.clock.policies) {
    const b = bit(p.index);
    if (!(keep & b)) continue;
    const n = listTouchedFirst(ctx, k, ts, period);
    keepEvent(ctx, k, b, touchedBy(ctx, p.index, n, ts, period), ts, error, late);
  }
  joinRows(ctx, k);
}

/** Rows of the key with the same session (policies on different rows that came out equal) become one. */
function joinRows(ctx: SessionContext, k: number): void {
  const slots = ctx.state.slots;
  for (let a = ctx.state.keys.head[k] as number; a !== NO_SLOT; a = slots.next[a] as number) {
    for (let b = slots.next[a] as number; b !== NO_SLOT;) {
      const next = slots.next[b] as number;
      if (sameSession(ctx, a, b)) {
        slots.mask[a] = ((slots.mask[a] as number) | (slots.mask[b] as number)) >>> 0;
        slots.ended[a] = ((slots.ended[a] as number) | (slots.ended[b] as number)) >>> 0;
        unlinkRow(ctx, b);
        slots.release(b);
        armRow(ctx, a);
      }
      b = next;
    }
  }
}

function sameSession(ctx: SessionContext, a: number, b: number): boolean {
  const { first, last, events, error } = ctx.state.slots;
  return first[a] === first[b] && last[a] === last[b] && events[a] === events[b] && error[a] === error[b];
}
