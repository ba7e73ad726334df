/**
 * Triggers (docs/semantics.md, "Policies are snapshot schedules"): what happens when a timer comes
 * due — early ticks, late flushes, the on-time and final panes of a policy, the reference closing a
 * window — and freeing a window once every policy and the reference are done with it.
 */
import { biasPoint, measureBias, type BiasPoint } from "./bias.js";
import { emitWindow, finalOf, type EmitContext } from "./pane-emitter.js";
import { emitsOnTime, hasFinalPane, type PolicyState } from "./policy-state.js";
import type { EventTimeCore } from "./stream-core.js";
import { TimerKind, type Timer } from "./timer-queue.js";
import type { CoreOutput } from "./types.js";
import { addsOf, forEachKey, STAGE_FINAL, STAGE_LATE_PENDING, STAGE_ON_TIME, type Window } from "./window-state.js";

export function fire(core: EventTimeCore, t: Timer, out: CoreOutput): void {
  if (t.kind === TimerKind.Early) return earlyTick(core, core.state.clock.policies[t.policy] as PolicyState, out);
  const w = core.state.windowConfigs[t.wc]?.windows.get(t.start);
  if (w === undefined) return;
  if (t.kind === TimerKind.Reference) return referenceClose(core, w);
  const p = core.state.clock.policies[t.policy] as PolicyState;
  if ((w.stage[p.index] as number) & STAGE_FINAL) return;
  if (t.kind === TimerKind.OnTime) onTime(core, p, w, out);
  else if (t.kind === TimerKind.Final) finalPane(core, p, w, out);
  else lateFlush(core, p, w, out);
}

function ctx(core: EventTimeCore, p: PolicyState, w: Window, out: CoreOutput): EmitContext {
  return {
    logTime: core.logTime,
    watermark: core.watermarkOf(p),
    sizeMs: w.end - w.start,
    out,
  };
}

function earlyTick(core: EventTimeCore, p: PolicyState, out: CoreOutput): void {
  const W = core.watermarkOf(p);
  for (const c of core.state.windowConfigs) {
    for (const w of c.windows.values()) {
      if (w.end <= W || (w.stage[p.index] as number) & STAGE_ON_TIME) continue;
      const adds = addsOf(w);
      if (adds === w.earlyMark[p.index]) continue;
      w.earlyMark[p.index] = adds;
      emitWindow(p, w, "early", ctx(core, p, w, out));
    }
  }
  core.scheduleEarly(p, core.logTime, p.cfg.earlyEveryMs as number);
}

function lateFlush(core: EventTimeCore, p: PolicyState, w: Window, out: CoreOutput): void {
  w.stage[p.index] = (w.stage[p.index] as number) & ~STAGE_LATE_PENDING;
  w.lastLateAt[p.index] = core.logTime;
  emitWindow(p, w, "late", ctx(core, p, w, out));
}

/** The on-time pane (W >= end); with grace 0 it is also the policy's final. */
export function onTime(core: EventTimeCore, p: PolicyState, w: Window, out: CoreOutput): void {
  w.stage[p.index] = (w.stage[p.index] as number) | STAGE_ON_TIME;
  emitWindow(p, w, "on-time", ctx(core, p, w, out));
  p.emitDelaySum += core.logTime - w.end;
  p.emitDelayCount++;
  if (!hasFinalPane(p)) close(core, p, w);
}

/** The final pane (W >= end + grace): the policy forgets the window. */
export function finalPane(core: EventTimeCore, p: PolicyState, w: Window, out: CoreOutput): void {
  emitWindow(p, w, "final", ctx(core, p, w, out));
  if (!emitsOnTime(p)) {
    p.emitDelaySum += core.logTime - w.end;
    p.emitDelayCount++;
  }
  close(core, p, w);
}

function close(core: EventTimeCore, p: PolicyState, w: Window): void {
  w.stage[p.index] = ((w.stage[p.index] as number) | STAGE_ON_TIME | STAGE_FINAL) & ~STAGE_LATE_PENDING;
  w.closed++;
  if (w.ref) p.bias.push(measureBias(w.ref, (s) => finalOf(w, p.index, s)));
  maybeFree(core, w);
}

/** The reference closes the window: its values are what bias is measured against. */
export function referenceClose(core: EventTimeCore, w: Window): void {
  const ref = new Map<string, BiasPoint>();
  forEachKey(w, (service, route, node) => {
    if (route === undefined) ref.set(service, biasPoint(node.agg.value()));
  });
  w.ref = ref;
  w.stage[core.P] = STAGE_FINAL;
  w.closed++;
  for (const p of core.state.clock.policies) {
    if ((w.stage[p.index] as number) & STAGE_FINAL) p.bias.push(measureBias(ref, (s) => finalOf(w, p.index, s)));
  }
  maybeFree(core, w);
}

function maybeFree(core: EventTimeCore, w: Window): void {
  if (w.closed < core.P + 1) return;
  const c = core.state.windowConfigs[w.configIndex];
  if (c === undefined) return;
  c.windows.delete(w.start);
  for (const s of w.slices) {
    if (--s.refs > 0) continue;
    c.slices.delete(s.start);
    if (c.lastSlice === s) c.lastSlice = undefined;
  }
}
