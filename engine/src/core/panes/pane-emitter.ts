/**
 * Turns one policy's snapshot of a window into panes, per accumulation mode (docs/semantics.md,
 * "Policies are snapshot schedules"): accumulating carries the full value, discarding the delta
 * since the last pane, retracting a `retract` of the previous value before the new one, final-only
 * only the final.
 */
import type { Pane, PaneBias, PaneKind, PaneValue } from "../../protocol.js";
import type { Aggregate } from "../windows/aggregate.js";
import { hasValueNumbers } from "../windows/value-numbers.js";
import { nowcastOf, type NowcastError } from "../dial/nowcast.js";
import { biasFor, nowcastErrorFor, type PolicyDial } from "../dial/policy-dial.js";
import { hasFinalPane, type PolicyState } from "./policy-state.js";
import { newKindPoints, recordPoint } from "./kind-points.js";
import { SLOT_FINAL, SLOT_ON_TIME, slotOf } from "./kind-slot.js";
import type { TriggerContext } from "./trigger-context.js";
import type { CoreOutput } from "../types.js";
import { forEachKey } from "../windows/window-combine.js";
import { keyIdOf, trackNodeOf, type KeyNode, type TrackNode, type Window } from "../windows/window-state.js";
import {
  clearLateDirty,
  isLateDirty,
  lastAggOf,
  lastCountOf,
  lastSlotOf,
  lastValueOf,
  lateAcceptedOf,
  openTrack,
  pointsOfTrack,
  seqOf,
  setLastAgg,
  setLastCount,
  setLastSlot,
  setLastValue,
  setPoints,
  setSeq,
  type PaneTracks,
} from "./pane-tracks.js";

type Emitted = Exclude<PaneKind, "retract">;

/** What every pane of one emission shares. */
interface Emission {
  readonly policy: PolicyState;
  readonly kind: Emitted;
  /** The kind slot of this emission (early: the age bucket at emission). */
  readonly slot: number;
  /** An on-time pane that is also the final one (grace 0): recorded in both slots. */
  readonly alsoFinal: boolean;
  readonly dial: PolicyDial;
  readonly window: { start: number; end: number };
  readonly watermark: number;
  readonly logTime: number;
  readonly out: CoreOutput;
  /** Pane ids are `idPrefix` + the key's id + `idSuffix` (docs/semantics.md, "Pane ids and the key encoding"), built per pane. */
  readonly idPrefix: string;
  readonly idSuffix: string;
  /** The service whose bias `bias` is (route panes carry their service's). */
  service: string | undefined;
  bias: PaneBias | undefined;
  /** The measured error of that service's nowcasts at this slot. */
  nowcastError: NowcastError | undefined;
}

/** The policy's panes of `kind` for the window's keys, read from the shared aggregates now. */
export function emitWindow(ctx: TriggerContext, policy: PolicyState, w: Window, kind: Emitted): void {
  const slot = slotOf(kind, w.start, w.end, ctx.logTime, policy.cfg.earlyEveryMs);
  const dial = ctx.dialOf(policy, w.configIndex);
  const alsoFinal = slot === SLOT_ON_TIME && !hasFinalPane(policy);
  recordEmitDelay(dial, slot, ctx.logTime - w.end);
  if (alsoFinal) recordEmitDelay(dial, SLOT_FINAL, ctx.logTime - w.end);
  const emission: Emission = {
    policy,
    kind,
    slot,
    alsoFinal,
    dial,
    window: { start: w.start, end: w.end },
    watermark: ctx.watermarkOf(policy),
    logTime: ctx.logTime,
    out: ctx.out,
    idPrefix: `${policy.cfg.name}|`,
    idSuffix: `|${w.end - w.start}|${w.start}`,
    service: undefined,
    bias: undefined,
    nowcastError: undefined,
  };
  forEachKey(w, (service, route, key) => {
    const node = trackToEmit(w, policy.index, kind, service, route, key);
    if (node !== undefined) emitKey(emission, service, route, key.agg, node.tracks as PaneTracks);
  });
}

function recordEmitDelay(dial: PolicyDial, slot: number, delayMs: number): void {
  dial.emitDelaySum[slot] = (dial.emitDelaySum[slot] as number) + delayMs;
  dial.emitDelayCount[slot] = (dial.emitDelayCount[slot] as number) + 1;
}

/** The emission's bias and nowcast error for `service` (looked up once per service). */
function lookUp(e: Emission, service: string): void {
  if (e.service === service && e.bias !== undefined) return;
  e.service = service;
  e.bias = biasFor(e.dial, service, e.slot);
  e.nowcastError = nowcastErrorFor(e.dial, service, e.slot);
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
  const p = policy;
  // A tumbling window's slice key is its track node (no string lookups).
  const cached = w.exclusive ? lastCountOf(key.tracks, p) : undefined;
  if (kind === "early" && (count === 0 || count === cached)) return undefined;
  const node = trackNodeOf(w, service, route, key);
  const tracks = node.tracks as PaneTracks;
  if (kind === "early" && (count === 0 || count === lastCountOf(tracks, p))) return undefined;
  if (kind === "late" && !isLateDirty(tracks, p)) return undefined;
  openTrack(tracks, p);
  return node;
}

/** One key's pane(s) per the policy's mode; updates its track (panes/pane-tracks.ts). */
function emitKey(e: Emission, service: string, route: string | undefined, agg: Aggregate, t: PaneTracks): void {
  const policy = e.policy;
  const p = policy.index;
  clearLateDirty(t, p);
  const count = agg.count;
  const full = agg.value();
  lookUp(e, service);
  const bias = e.bias as PaneBias;
  // In discarding mode too the nowcast is of the whole window (what the reference will say), not of the delta.
  const nowcast = nowcastOf(full, bias, e.nowcastError as NowcastError);
  if (route === undefined) {
    let points = pointsOfTrack(t, p);
    if (points === null || points === undefined) setPoints(t, p, (points = newKindPoints()));
    recordPoint(points, e.slot, full, nowcast?.value ?? null);
    if (e.alsoFinal) recordPoint(points, SLOT_FINAL, full, nowcast?.value ?? null);
  }
  const id = e.idPrefix + keyIdOf(service, route) + e.idSuffix;
  const lateAccepted = lateAcceptedOf(t, p);
  let seq = seqOf(t, p);
  const pane = (kind: PaneKind, value: PaneValue, paneBias: PaneBias): Pane => {
    const out: Pane = {
      id,
      seq: seq++,
      kind,
      policy: policy.cfg.name,
      key: route === undefined ? { service } : { service, route },
      window: e.window,
      value,
      watermark: e.watermark,
      emittedAt: e.logTime,
      emitDelayMs: e.logTime - e.window.end,
      pipelineLagMs: 0,
      lateAccepted,
      dropped: policy.droppedWindowEvents,
      bias: paneBias,
    };
    if (nowcast !== null && kind !== "retract") out.nowcast = nowcast;
    return out;
  };
  if (policy.cfg.mode === "discarding") {
    const delta = agg.clone();
    const lastAgg = lastAggOf(t, p);
    if (lastAgg) delta.subtract(lastAgg);
    setLastAgg(t, p, agg.clone());
    e.out.pane(pane(e.kind, delta.value(), bias));
  } else if (policy.cfg.mode === "retracting") {
    // A retract carries the bias of the kind (and age) of the pane it retracts, as measured now.
    const last = lastValueOf(t, p);
    if (last) e.out.pane(pane("retract", last, biasFor(e.dial, service, lastSlotOf(t, p))));
    e.out.pane(pane(e.kind, full, bias));
    // The aggregate's kept numbers of `full`, shared (windows/value-numbers.ts), where it keeps them.
    setLastValue(t, p, full, hasValueNumbers(agg) ? agg.valueNumbers() : undefined);
  } else {
    e.out.pane(pane(e.kind, full, bias));
  }
  setSeq(t, p, seq);
  setLastSlot(t, p, e.slot);
  setLastCount(t, p, count);
}
