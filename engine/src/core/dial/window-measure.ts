/**
 * Measuring one window against the reference (docs/semantics.md, "Measured bias"): once both the
 * reference and a policy have closed it, each service's value at each pane kind the policy showed —
 * its last pane in each early age bucket, its on-time pane, its last late pane, its final — is
 * compared with the reference's, per service and summed over services (pooled). On-time and final
 * always count (a service with no pane there showed nothing: a zero); early and late count where
 * the service had a pane.
 */
import { PooledSum, type BiasPoint } from "./bias.js";
import { LatenessWindow } from "./lateness.js";
import { NowcastSum, nowcastError } from "./nowcast.js";
import { serviceKinds, trackerOf, type PolicyDial } from "./policy-dial.js";
import { emitsOnTime, type PolicyState } from "../panes/policy-state.js";
import { nowcastAt, pointAt, type KindPoints } from "../panes/kind-points.js";
import { pointsOfTrack } from "../panes/pane-tracks.js";
import { SLOT_FINAL, SLOT_ON_TIME, SLOTS } from "../panes/kind-slot.js";
import { serviceTracks, type Window } from "../windows/window-state.js";

const ZERO: BiasPoint = Object.freeze({ count: 0, errors: 0, p99: 0, users: 0 });

/** The value a policy showed at `slot` (null: the slot does not count for this service). */
export function shownAt(points: KindPoints | null | undefined, slot: number, onTime: boolean): BiasPoint | null {
  const v = pointAt(points, slot);
  if (v !== null) return v;
  return slot === SLOT_FINAL || (slot === SLOT_ON_TIME && onTime) ? ZERO : null;
}

/** The policy's recorded values per pane kind of a service in the window. */
export function pointsOf(w: Window, policy: number, service: string): KindPoints | null | undefined {
  return pointsOfTrack(serviceTracks(w, service)?.tracks, policy);
}

/** Scratch sums, one per slot, and one for a single service (reset at each use). */
const sums = Array.from({ length: SLOTS }, () => new PooledSum());
const nowcastSums = Array.from({ length: SLOTS }, () => new NowcastSum());
const one = new PooledSum();

/** Compares one service's shown value with the reference. */
export function compareOne(r: BiasPoint, v: BiasPoint): ReturnType<PooledSum["sample"]> {
  one.reset();
  one.add(r, v);
  return one.sample();
}

/**
 * The reference closed a window of the smallest size: each service's on-time and late events and
 * errors under the policy join its lateness correlation (docs/semantics.md, "Correlated lateness").
 */
export function measureLateness(dial: PolicyDial, p: PolicyState, w: Window, logTime: number): void {
  const ref = w.ref as ReadonlyMap<string, BiasPoint>;
  const lateness = w.lateness as ReadonlyMap<string, Float64Array>;
  for (const [service, r] of ref) {
    const v = lateness.get(service);
    const late = v === undefined ? 0 : (v[2 * p.index] as number);
    const lateErrors = v === undefined ? 0 : (v[2 * p.index + 1] as number);
    const kinds = serviceKinds(dial, service);
    kinds.lastSeen = logTime;
    (kinds.lateness ??= new LatenessWindow(dial.size)).push(r.count - late, r.errors - lateErrors, late, lateErrors);
  }
}

/** Pushes the window's samples into the policy's dial (the window's `ref` is set). */
export function measureWindow(dial: PolicyDial, p: PolicyState, w: Window, logTime: number): void {
  const ref = w.ref as ReadonlyMap<string, BiasPoint>;
  measureShown(dial, emitsOnTime(p), ref, (service) => pointsOf(w, p.index, service), logTime);
}

/**
 * One closed window of any operator: each service of `ref` (the reference's values) against what the
 * policy showed of it at each pane kind (`shown`), per service and pooled, into the policy's dial.
 */
export function measureShown(
  dial: PolicyDial,
  onTime: boolean,
  ref: ReadonlyMap<string, BiasPoint>,
  shown: (service: string) => KindPoints | null | undefined,
  logTime: number,
): void {
  dial.closedWindows++;
  dial.provisional = null;
  for (const s of sums) s.reset();
  for (const s of nowcastSums) s.reset();
  for (const [service, r] of ref) {
    const points = shown(service);
    const kinds = serviceKinds(dial, service);
    kinds.lastSeen = logTime;
    kinds.seenWindow = dial.closedWindows;
    for (let slot = 0; slot < SLOTS; slot++) {
      const v = shownAt(points, slot, onTime);
      if (v === null) continue;
      trackerOf(dial, kinds.bias, slot, "service").push(compareOne(r, v));
      (sums[slot] as PooledSum).add(r, v);
      const nc = nowcastAt(points, slot);
      if (nc === null) continue;
      trackerOf(dial, kinds.nowcastError, slot, "service").push(nowcastError(r, nc));
      (nowcastSums[slot] as NowcastSum).add(r, nc);
    }
  }
  for (let slot = 0; slot < SLOTS; slot++) {
    const sum = sums[slot] as PooledSum;
    if (sum.services > 0) trackerOf(dial, dial.pooled, slot, "policy").push(sum.sample());
    const nowcasts = nowcastSums[slot] as NowcastSum;
    if (nowcasts.services > 0) trackerOf(dial, dial.pooledNowcastError, slot, "policy").push(nowcasts.sample());
  }
}
