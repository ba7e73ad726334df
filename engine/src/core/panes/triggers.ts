/**
 * Triggers (docs/semantics.md, "Policies are snapshot schedules"): what happens when a timer comes
 * due — early ticks, late flushes, the on-time and final panes of a policy, the reference closing a
 * window — plus arming a late flush when a late event is accepted, and releasing a window once every
 * policy and the reference are done with it.
 *
 * Invariants. A trigger runs when its timer is due (or from finish()), in the timers' total order:
 * log time and every watermark already include the input being processed, and every timer due
 * earlier has fired. It may assume the window's slices hold every event any closer accepted so far
 * (the add happens before triggers run) and, by the monotone watermark, that what its policy keeps
 * of the window is a prefix of that: its pane is a snapshot of the shared aggregate, now.
 * A trigger may update only the window and policy it is handed (kind bits, pane tracks, late
 * marks, emit-delay counters, its dial), emit only through `ctx.out`, arm timers only through
 * `ctx.schedule`, and release a window only through `ctx.free`, once every closer has closed it.
 * It must not add to or remove from an aggregate, move log time or a watermark, read a clock, or
 * touch any other window; a window a policy has closed (KIND_FINAL) gets no more of its panes.
 */
import { biasPoint, type BiasPoint } from "../dial/bias.js";
import { emitWindow } from "./pane-emitter.js";
import { emitsOnTime, hasFinalPane, type PolicyState } from "./policy-state.js";
import type { TriggerContext } from "./trigger-context.js";
import { dropCombine, forEachKey } from "../windows/window-combine.js";
import { measureLateness, measureWindow } from "../dial/window-measure.js";
import { WindowTimerKind } from "../windows/window-timer.js";
import {
  addsOf,
  KIND_FINAL,
  KIND_LATE_PENDING,
  KIND_ON_TIME,
  type TrackNode,
  type Window,
} from "../windows/window-state.js";
import { addLate, type PaneTracks } from "./pane-tracks.js";

/** Early panes of every window of `windows` the policy still has open and that changed since its last tick. */
export function earlyTick(ctx: TriggerContext, p: PolicyState, windows: Iterable<Window>): void {
  const watermark = ctx.watermarkOf(p);
  for (const w of windows) {
    if (w.end <= watermark || (w.kinds[p.index] as number) & KIND_ON_TIME) continue;
    const adds = addsOf(w);
    if (adds === w.earlyMark[p.index]) continue;
    w.earlyMark[p.index] = adds;
    emitWindow(ctx, p, w, "early");
  }
}

/** Late panes for the keys that took late events since the last one. */
export function lateFlush(ctx: TriggerContext, p: PolicyState, w: Window): void {
  w.kinds[p.index] = (w.kinds[p.index] as number) & ~KIND_LATE_PENDING;
  w.lastLateAt[p.index] = ctx.logTime;
  emitWindow(ctx, p, w, "late");
}

/**
 * A late event was accepted into the window for the policy (its key nodes are given): marks the
 * keys and, once the on-time pane is out and the policy emits late panes, arms one late flush at
 * most every `lateEvery`.
 */
export function acceptLate(
  ctx: TriggerContext,
  p: PolicyState,
  w: Window,
  service: TrackNode,
  route: TrackNode | null,
  events = 1,
): void {
  markLate(service, p.index, events);
  if (route !== null) markLate(route, p.index, events);
  const every = p.cfg.lateEveryMs;
  const kinds = w.kinds[p.index] as number;
  if (every === null || !emitsOnTime(p) || !(kinds & KIND_ON_TIME) || kinds & KIND_LATE_PENDING) return;
  w.kinds[p.index] = kinds | KIND_LATE_PENDING;
  const due = Math.max(ctx.logTime, (w.lastLateAt[p.index] as number) + every);
  ctx.schedule({ due, kind: WindowTimerKind.LateFlush, policy: p.index, configIndex: w.configIndex, start: w.start });
}

function markLate(node: TrackNode, policy: number, events: number): void {
  addLate(node.tracks as PaneTracks, policy, events);
}

/** The on-time pane (W >= end); with grace 0 it is also the policy's final. */
export function onTime(ctx: TriggerContext, p: PolicyState, w: Window): void {
  w.kinds[p.index] = (w.kinds[p.index] as number) | KIND_ON_TIME;
  emitWindow(ctx, p, w, "on-time");
  p.emitDelaySum += ctx.logTime - w.end;
  p.emitDelayCount++;
  if (!hasFinalPane(p)) close(ctx, p, w);
}

/** The final pane (W >= end + grace): the policy forgets the window. */
export function finalPane(ctx: TriggerContext, p: PolicyState, w: Window): void {
  emitWindow(ctx, p, w, "final");
  if (!emitsOnTime(p)) {
    p.emitDelaySum += ctx.logTime - w.end;
    p.emitDelayCount++;
  }
  close(ctx, p, w);
}

function close(ctx: TriggerContext, p: PolicyState, w: Window): void {
  w.kinds[p.index] = ((w.kinds[p.index] as number) | KIND_ON_TIME | KIND_FINAL) & ~KIND_LATE_PENDING;
  w.closed++;
  if (w.ref) measureWindow(ctx.dialOf(p, w.configIndex), p, w, ctx.logTime);
  if (w.closed === w.kinds.length) ctx.free(w);
  else dropCombineIfDone(w);
}

/** Once every policy has its final, no pane reads the window's combine again: only the reference, once. */
function dropCombineIfDone(w: Window): void {
  for (let i = 0; i < w.kinds.length - 1; i++) if (!((w.kinds[i] as number) & KIND_FINAL)) return;
  dropCombine(w);
}

/** The reference closes the window: its values are what bias is measured against (for `policies`). */
export function referenceClose(ctx: TriggerContext, w: Window, policies: readonly PolicyState[]): void {
  const ref = new Map<string, BiasPoint>();
  forEachKey(w, (service, route, node) => {
    if (route === undefined) ref.set(service, biasPoint(node.agg.value()));
  });
  w.ref = ref;
  w.kinds[w.kinds.length - 1] = KIND_FINAL;
  w.closed++;
  dropCombineIfDone(w);
  for (const p of policies) {
    const dial = ctx.dialOf(p, w.configIndex);
    if (w.lateness !== null) measureLateness(dial, p, w, ctx.logTime);
    if ((w.kinds[p.index] as number) & KIND_FINAL) measureWindow(dial, p, w, ctx.logTime);
  }
  if (w.closed === w.kinds.length) ctx.free(w);
}
