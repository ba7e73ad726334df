/**
 * Turns one policy's snapshot of a window into panes, per accumulation mode (docs/semantics.md,
 * "Policies are snapshot schedules"): accumulating carries the full value, discarding the delta
 * since the last pane, retracting a `retract` of the previous value before the new one, final-only
 * only the final.
 */
import type { Pane, PaneKind, PaneValue } from "../protocol.js";
import { biasPoint, type BiasPoint } from "./bias.js";
import type { PolicyState } from "./policy-state.js";
import type { TriggerContext } from "./trigger-context.js";
import { forEachKey, newTrack, trackNode, type Window } from "./window-state.js";

type Emitted = Exclude<PaneKind, "retract">;

/** The policy's panes of `kind` for the window's keys, read from the shared aggregates now. */
export function emitWindow(ctx: TriggerContext, pol: PolicyState, w: Window, kind: Emitted): void {
  const window = { start: w.start, end: w.end };
  const sizeMs = w.end - w.start;
  const watermark = ctx.watermarkOf(pol);
  const logTime = ctx.logTime;
  const out = ctx.out;
  const name = pol.cfg.name;
  const bias = pol.bias.current();
  forEachKey(w, (service, route, key) => {
    const agg = key.agg;
    let t = w.exclusive ? key.track?.tracks[pol.index] : undefined;
    if (kind === "early" && (agg.count === 0 || agg.count === t?.lastCount)) return;
    const node = w.exclusive ? (key.track ??= trackNode(w, service, route)) : trackNode(w, service, route);
    t = node.tracks[pol.index];
    if (kind === "early" && (agg.count === 0 || agg.count === t?.lastCount)) return;
    if (kind === "late" && !t?.lateDirty) return;
    if (t === undefined) t = node.tracks[pol.index] = newTrack();
    t.lateDirty = false;
    const full = agg.value();
    if (route === undefined && (kind === "on-time" || kind === "final")) t.final = biasPoint(full);
    const id = (t.id ??= `${name}|${node.keyId}|${sizeMs}|${w.start}`);
    const pane = (k: PaneKind, value: PaneValue): Pane => ({
      id,
      seq: (t as { seq: number }).seq++,
      kind: k,
      policy: name,
      key: route === undefined ? { service } : { service, route },
      window,
      value,
      watermark,
      emittedAt: logTime,
      emitDelayMs: logTime - w.end,
      pipelineLagMs: 0,
      lateAccepted: (t as { lateAccepted: number }).lateAccepted,
      dropped: pol.dropped,
      bias,
    });
    if (pol.cfg.mode === "discarding") {
      const delta = agg.clone();
      if (t.lastAgg) delta.subtract(t.lastAgg);
      t.lastAgg = agg.clone();
      out.pane(pane(kind, delta.value()));
    } else if (pol.cfg.mode === "retracting") {
      if (t.lastValue) out.pane(pane("retract", t.lastValue));
      out.pane(pane(kind, full));
      t.lastValue = full;
    } else {
      out.pane(pane(kind, full));
    }
    t.lastCount = agg.count;
  });
}

/** The final value of the policy for a service, or null if it never emitted it. */
export function finalOf(w: Window, policy: number, service: string): BiasPoint | null {
  return w.tracks.get(service)?.tracks[policy]?.final ?? null;
}
