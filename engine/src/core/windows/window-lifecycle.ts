/**
 * A window's life (docs/semantics.md, "Windows" and "Policies are snapshot schedules"): opened with
 * the slice its first event falls in, its closers' timers armed, released once every policy's
 * final and the reference have closed it. A slice is opened with the windows containing it and
 * freed with the last of them.
 */
import type { WindowConfigState } from "../core-state.js";
import type { DriverView } from "../watermarks/input-driver.js";
import { emitsOnTime, hasFinalPane } from "../panes/policy-state.js";
import { firstWindowStart, windowStartsOf } from "./window-assigner.js";
import {
  linkSlice,
  newWindow,
  KIND_FINAL,
  KIND_LATE_PENDING,
  KIND_ON_TIME,
  type Slice,
  type Window,
} from "./window-state.js";
import { dropCombine } from "./window-combine.js";
import { WindowTimerKind, type WindowTimer } from "./window-timer.js";

/** Earliest end of any window of the grid's configs containing the slice at `sliceStart`. */
export function minEndOf(configs: readonly WindowConfigState[], grid: WindowConfigState, sliceStart: number): number {
  let minEnd = Infinity;
  for (const j of grid.sharers) {
    const spec = (configs[j] as WindowConfigState).spec;
    minEnd = Math.min(minEnd, firstWindowStart(spec, sliceStart) + spec.sizeMs);
  }
  return minEnd;
}

/**
 * Creates a slice of the grid and links it into the windows of every config built from it (in
 * config order); undefined when every such window is closed for all.
 */
export function openSlice(
  driver: DriverView<WindowTimer>,
  referenceHorizonMs: number,
  configs: readonly WindowConfigState[],
  grid: WindowConfigState,
  sliceStart: number,
): Slice | undefined {
  const slice: Slice = {
    start: sliceStart,
    services: new Map(),
    refs: 0,
    adds: 0,
    minEnd: minEndOf(configs, grid, sliceStart),
    foldedInto: null,
  };
  for (const j of grid.sharers) {
    const c = configs[j] as WindowConfigState;
    for (const start of windowStartsOf(c.spec, sliceStart)) {
      const w = c.windows.get(start) ?? openWindow(driver, referenceHorizonMs, c, start);
      if (w === undefined) continue;
      linkSlice(w, slice);
    }
  }
  if (slice.refs === 0) return undefined;
  grid.slices.set(sliceStart, slice);
  return slice;
}

/**
 * Creates a window and arms each closer still open for it; undefined if none is. A window that
 * opens already behind a policy's W (end <= W < end + grace) gets no on-time pane from it: its
 * first event is late, so its panes are late (and final) ones (docs/semantics.md, "Late data").
 */
function openWindow(
  driver: DriverView<WindowTimer>,
  referenceHorizonMs: number,
  c: WindowConfigState,
  start: number,
): Window | undefined {
  const spec = c.spec;
  const policies = driver.clock.policies;
  const w = newWindow(c.index, start, spec.sizeMs, spec.sliceMs, c.exclusive, policies.length, c.countsLateness);
  for (const p of policies) {
    const watermark = driver.watermarkOf(p);
    if (w.end + p.cfg.graceMs <= watermark) {
      w.kinds[p.index] = KIND_ON_TIME | KIND_FINAL;
      w.closed++;
    } else if (w.end <= watermark && emitsOnTime(p)) w.kinds[p.index] = KIND_ON_TIME;
  }
  if (w.end + referenceHorizonMs <= driver.clock.logTime) {
    w.kinds[policies.length] = KIND_FINAL;
    w.closed++;
  }
  if (w.closed === w.kinds.length) return undefined;
  scheduleWindow(driver, referenceHorizonMs, w);
  c.windows.set(start, w);
  return w;
}

/** Arms every pending timer of a window (also how queues are rebuilt on restore). */
export function scheduleWindow(driver: DriverView<WindowTimer>, referenceHorizonMs: number, w: Window): void {
  const at = { configIndex: w.configIndex, start: w.start };
  const policies = driver.clock.policies;
  for (const p of policies) {
    const kinds = w.kinds[p.index] as number;
    if (kinds & KIND_FINAL) continue;
    const policy = p.index;
    if (emitsOnTime(p) && !(kinds & KIND_ON_TIME))
      driver.atWatermark(p, { due: driver.dueAt(p, w.end), kind: WindowTimerKind.OnTime, policy, ...at });
    if (hasFinalPane(p)) {
      const due = driver.dueAt(p, w.end + p.cfg.graceMs);
      driver.atWatermark(p, { due, kind: WindowTimerKind.Final, policy, ...at });
    }
    if (kinds & KIND_LATE_PENDING && p.cfg.lateEveryMs !== null) {
      const due = (w.lastLateAt[p.index] as number) + p.cfg.lateEveryMs;
      driver.atLogTime({ due, kind: WindowTimerKind.LateFlush, policy, ...at });
    }
  }
  if (!((w.kinds[policies.length] as number) & KIND_FINAL)) {
    const due = w.end + referenceHorizonMs;
    driver.atLogTime({ due, kind: WindowTimerKind.Reference, policy: policies.length, ...at });
  }
}

/** Releases a window every closer is done with, and the slices of its grid only it still held. */
export function freeWindow(c: WindowConfigState, grid: WindowConfigState, w: Window): void {
  c.windows.delete(w.start);
  for (const s of w.slices) {
    if (--s.refs > 0) continue;
    grid.slices.delete(s.start);
    if (grid.lastSlice === s) grid.lastSlice = undefined;
  }
  dropCombine(w);
}
