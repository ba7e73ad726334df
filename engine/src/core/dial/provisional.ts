/**
 * Provisional bias (docs/semantics.md, "Measured bias"): until the reference closes its first
 * window for a policy and window size, the dial has nothing measured. Meanwhile, at every check,
 * each pane kind's value the policy recorded in a window the reference still holds is compared with the
 * window's aggregate as it stands now (what the reference has gathered so far): a lower bound of
 * the shortfall, published with `provisional: true` and replaced by the real measurement at the
 * first reference close. A check recomputes the figures from the windows, over the last
 * biasWindows windows, per service and pooled.
 */
import { biasPoint, BiasTracker, PooledSum, type BiasLabel, type BiasPoint } from "./bias.js";
import type { WindowConfigState } from "../core-state.js";
import type { ProvisionalDial } from "./policy-dial.js";
import { emitsOnTime, type PolicyState } from "../panes/policy-state.js";
import { LABELS, SLOT_FINAL, SLOT_ON_TIME, SLOTS } from "../panes/kind-slot.js";
import { compareOne, pointsOf, shownAt } from "./window-measure.js";
import { forEachKey } from "../windows/window-combine.js";
import { KIND_FINAL, KIND_ON_TIME, type Window } from "../windows/window-state.js";

function tracker(
  ts: (BiasTracker | undefined)[],
  slot: number,
  size: number,
  labels: readonly BiasLabel[],
): BiasTracker {
  return (ts[slot] ??= new BiasTracker(size, labels[slot] as BiasLabel));
}

const sums = Array.from({ length: SLOTS }, () => new PooledSum());

/**
 * Recomputes the provisional figures for window config `c` of every policy still without a
 * measured window (size: biasWindows). Each window's aggregate is read once for all of them.
 */
export function measureProvisional(c: WindowConfigState, policies: readonly PolicyState[], size: number): void {
  const pending = policies.filter((p) => c.dials[p.index]?.provisional != null);
  if (pending.length === 0) return;
  for (const p of pending) {
    const prov = c.dials[p.index]?.provisional as ProvisionalDial;
    for (const t of prov.pooled) t?.clear();
    prov.services.clear();
  }
  const open = [...c.windows.values()].filter((w) => w.ref === null).sort((a, b) => a.start - b.start);
  for (const w of open) {
    const now = new Map<string, BiasPoint>();
    forEachKey(w, (service, route, node) => {
      if (route === undefined) now.set(service, biasPoint(node.agg.value()));
    });
    for (const p of pending) compareWindow(c.dials[p.index]?.provisional as ProvisionalDial, p, w, now, size);
  }
}

/** The slots that count for the window under the policy: recorded ones, and on-time / final once passed. */
function passed(w: Window, p: PolicyState): { onTime: boolean; final: boolean } {
  const kinds = w.kinds[p.index] as number;
  return { onTime: emitsOnTime(p) && (kinds & KIND_ON_TIME) !== 0, final: (kinds & KIND_FINAL) !== 0 };
}

/** Compares the policy's recorded values per pane kind of a window with its aggregate `now` (per service). */
function compareWindow(
  prov: ProvisionalDial,
  p: PolicyState,
  w: Window,
  now: ReadonlyMap<string, BiasPoint>,
  size: number,
): void {
  const { onTime, final } = passed(w, p);
  for (const s of sums) s.reset();
  for (const [service, r] of now) {
    const points = pointsOf(w, p.index, service);
    let own: (BiasTracker | undefined)[] | undefined;
    for (let slot = 0; slot < SLOTS; slot++) {
      if ((slot === SLOT_FINAL && !final) || (slot === SLOT_ON_TIME && !onTime)) continue;
      const v = shownAt(points, slot, onTime);
      if (v === null) continue;
      own ??= ownTrackers(prov, service);
      tracker(own, slot, size, LABELS.provisionalService).push(compareOne(r, v));
      (sums[slot] as PooledSum).add(r, v);
    }
  }
  for (let slot = 0; slot < SLOTS; slot++) {
    const sum = sums[slot] as PooledSum;
    if (sum.services > 0) tracker(prov.pooled, slot, size, LABELS.provisionalPolicy).push(sum.sample());
  }
}

function ownTrackers(prov: ProvisionalDial, service: string): (BiasTracker | undefined)[] {
  let own = prov.services.get(service);
  if (own === undefined) prov.services.set(service, (own = new Array<BiasTracker | undefined>(SLOTS).fill(undefined)));
  return own;
}
