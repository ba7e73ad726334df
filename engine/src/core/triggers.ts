/**
 * Triggers (docs/semantics.md, "Policies are snapshot schedules"): what happens when a timer comes
 * due — early ticks, late flushes, the on-time and final panes of a policy, the reference closing a
 * window — and freeing a window once every policy and the reference are done with it.
 */
import { biasPoint, measureBias, type BiasPoint } from "./bias.js";
import { emitWindow, finalOf, type EmitContext } from "./pane-emitter.js";
import { emitsOnTime, hasFinalPane, type PolicyRuntime } from "./policy-runtime.js";
import type { EventTimeCore } from "./stream-core.js";
import { TimerKind, type Timer } from "./timer-queue.js";
import type { CoreOutput } from "./types.js";
import type { WindowSpec } from "./window-assigner.js";
import {
  addsOf,
  forEachKey,
  STAGE_FINAL,
  STAGE_LATE_PENDING,
  STAGE_ON_TIME,
  type Slice,
  type Window,
} from "./window-state.js";

export function fire(core: EventTimeCore, t: Timer, out: CoreOutput): void {
  if (t.kind === TimerKind.Early) return earlyTick(core, core.pols[t.policy] as PolicyRuntime, out);
  const w = (core.windows[t.wc] as Map<number, Window>).get(t.start);
  if (w === undefined) return;
  if (t.kind === TimerKind.Reference) return referenceClose(core, w);
  const p = core.pols[t.policy] as PolicyRuntime;
  if ((w.stage[p.index] as number) & STAGE_FINAL) return;
  if (t.kind === TimerKind.OnTime) onTime(core, p, w, out);
  else if (t.kind === TimerKind.Final) finalPane(core, p, w, out);
  else lateFlush(core, p, w, out);
}

function ctx(core: EventTimeCore, p: PolicyRuntime, w: Window, out: CoreOutput): EmitContext {
  return {
    logTime: core.logTime,
    watermark: core.watermarkOf(p),
    sizeMs: (core.specs[w.wc] as WindowSpec).sizeMs,
    out,
  };
}

function earlyTick(core: EventTimeCore, p: PolicyRuntime, out: CoreOutput): void {
  const W = core.watermarkOf(p);
  for (const windows of core.windows) {
    for (const w of windows.values()) {
      if (w.end <= W || (w.stage[p.index] as number) & STAGE_ON_TIME) continue;
      const adds = addsOf(w);
      if (adds === w.earlyMark[p.index]) continue;
      w.earlyMark[p.index] = adds;
      emitWindow(p, w, "early", ctx(core, p, w, out));
    }
  }
  core.scheduleEarly(p, core.logTime, p.cfg.earlyEveryMs as number);
}

function lateFlush(core: EventTimeCore, p: PolicyRuntime, w: Window, out: CoreOutput): void {
  w.stage[p.index] = (w.stage[p.index] as number) & ~STAGE_LATE_PENDING;
  w.lastLateAt[p.index] = core.logTime;
  emitWindow(p, w, "late", ctx(core, p, w, out));
}

/** The on-time pane (W >= end); with grace 0 it is also the policy's final. */
export function onTime(core: EventTimeCore, p: PolicyRuntime, w: Window, out: CoreOutput): void {
  w.stage[p.index] = (w.stage[p.index] as number) | STAGE_ON_TIME;
  emitWindow(p, w, "on-time", ctx(core, p, w, out));
  p.emitDelaySum += core.logTime - w.end;
  p.emitDelayCount++;
  if (!hasFinalPane(p)) close(core, p, w);
}

/** The final pane (W >= end + grace): the policy forgets the window. */
export function finalPane(core: EventTimeCore, p: PolicyRuntime, w: Window, out: CoreOutput): void {
  emitWindow(p, w, "final", ctx(core, p, w, out));
  if (!emitsOnTime(p)) {
    p.emitDelaySum += core.logTime - w.end;
    p.emitDelayCount++;
  }
  close(core, p, w);
}

function close(core: EventTimeCore, p: PolicyRuntime, w: Window): void {
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
  for (const p of core.pols) {
    if ((w.stage[p.index] as number) & STAGE_FINAL) p.bias.push(measureBias(ref, (s) => finalOf(w, p.index, s)));
  }
  maybeFree(core, w);
}

function maybeFree(core: EventTimeCore, w: Window): void {
  if (w.closed < core.P + 1) return;
  (core.windows[w.wc] as Map<number, Window>).delete(w.start);
  const slices = core.slices[w.wc] as Map<number, Slice>;
  for (const s of w.slices) {
    if (--s.refs > 0) continue;
    slices.delete(s.start);
    if (core.lastSlice[w.wc] === s) core.lastSlice[w.wc] = undefined;
  }
}
