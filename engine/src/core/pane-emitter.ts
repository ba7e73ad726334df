/**
 * Turns one policy's snapshot of a window into panes, per accumulation mode (docs/semantics.md,
 * "Policies are snapshot schedules"): accumulating carries the full value, discarding the delta
 * since the last pane, retracting a `retract` of the previous value before the new one, final-only
 * only the final.
 */
import type { Pane, PaneBias, PaneKind, PaneValue } from "../protocol.js";
import type { Aggregate } from "./aggregate.js";
import { biasPoint, type BiasPoint } from "./bias.js";
import type { PolicyState } from "./policy-state.js";
import type { TriggerContext } from "./trigger-context.js";
import type { CoreOutput } from "./types.js";
import {
  forEachKey,
  newTrack,
  trackNode,
  type KeyNode,
  type PaneTrack,
  type TrackNode,
  type Window,
} from "./window-state.js";

type Emitted = Exclude<PaneKind, "retract">;

/** What every pane of one emission shares. */
interface Emission {
  readonly policy: PolicyState;
  readonly kind: Emitted;
  readonly window: { start: number; end: number };
  readonly sizeMs: number;
  readonly watermark: number;
  readonly logTime: number;
  readonly bias: PaneBias;
  readonly out: CoreOutput;
}

/** The policy's panes of `kind` for the window's keys, read from the shared aggregates now. */
export function emitWindow(ctx: TriggerContext, policy: PolicyState, w: Window, kind: Emitted): void {
  const emission: Emission = {
    policy,
    kind,
    window: { start: w.start, end: w.end },
    sizeMs: w.end - w.start,
    watermark: ctx.watermarkOf(policy),
    logTime: ctx.logTime,
    bias: policy.bias.current(),
    out: ctx.out,
  };
  forEachKey(w, (service, route, key) => {
    const node = trackToEmit(w, policy.index, kind, service, route, key);
    if (node !== undefined) emitKey(emission, service, route, key.agg, node.tracks[policy.index] as PaneTrack, node);
  });
}

/**
 * The key's track node when the key has a pane to emit (its track created), else undefined: early
 * panes skip keys unchanged since their last pane, late panes keys without late events.
 */
function trackToEmit(
  w: Window,
  policy: number,
  kind: Emitted,
  service: string,
  route: string | undefined,
  key: KeyNode,
): TrackNode | undefined {
  const count = key.agg.count;
  // A tumbling window's slice key caches its track node (no string lookups).
  const cached = w.exclusive ? key.track?.tracks[policy] : undefined;
  if (kind === "early" && (count === 0 || count === cached?.lastCount)) return undefined;
  const node = w.exclusive ? (key.track ??= trackNode(w, service, route)) : trackNode(w, service, route);
  const t = node.tracks[policy];
  if (kind === "early" && (count === 0 || count === t?.lastCount)) return undefined;
  if (kind === "late" && !t?.lateDirty) return undefined;
  if (t === undefined) node.tracks[policy] = newTrack();
  return node;
}

/** One key's pane(s) per the policy's mode; updates its track. */
function emitKey(
  e: Emission,
  service: string,
  route: string | undefined,
  agg: Aggregate,
  t: PaneTrack,
  node: TrackNode,
): void {
  const policy = e.policy;
  t.lateDirty = false;
  const full = agg.value();
  if (route === undefined && (e.kind === "on-time" || e.kind === "final")) t.final = biasPoint(full);
  const id = (t.id ??= `${policy.cfg.name}|${node.keyId}|${e.sizeMs}|${e.window.start}`);
  const pane = (kind: PaneKind, value: PaneValue): Pane => ({
    id,
    seq: t.seq++,
    kind,
    policy: policy.cfg.name,
    key: route === undefined ? { service } : { service, route },
    window: e.window,
    value,
    watermark: e.watermark,
    emittedAt: e.logTime,
    emitDelayMs: e.logTime - e.window.end,
    pipelineLagMs: 0,
    lateAccepted: t.lateAccepted,
    dropped: policy.droppedWindowEvents,
    bias: e.bias,
  });
  if (policy.cfg.mode === "discarding") {
    const delta = agg.clone();
    if (t.lastAgg) delta.subtract(t.lastAgg);
    t.lastAgg = agg.clone();
    e.out.pane(pane(e.kind, delta.value()));
  } else if (policy.cfg.mode === "retracting") {
    if (t.lastValue) e.out.pane(pane("retract", t.lastValue));
    e.out.pane(pane(e.kind, full));
    t.lastValue = full;
  } else {
    e.out.pane(pane(e.kind, full));
  }
  t.lastCount = agg.count;
}

/** The final value of the policy for a service, or null if it never emitted it. */
export function finalOf(w: Window, policy: number, service: string): BiasPoint | null {
  return w.tracks.get(service)?.tracks[policy]?.final ?? null;
}
