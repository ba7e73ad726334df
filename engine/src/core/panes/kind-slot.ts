/**
 * The pane kinds (early ones by age) a policy's value of a window is measured at (docs/semantics.md, "Measured bias"): the
 * early age buckets (AGE_BUCKETS: quarters of the window before its end, early intervals after it),
 * on-time, late and final. A slot is the index of one of them; bias trackers, emit delays and the values a
 * window recorded are kept per slot.
 */
import { AGE_BUCKETS, ageBucketOf, type AgeBucket, type BiasStage, type PaneKind } from "../../protocol.js";
import type { BiasLabel } from "../dial/bias.js";

export const SLOT_ON_TIME = AGE_BUCKETS.length;
export const SLOT_LATE = SLOT_ON_TIME + 1;
export const SLOT_FINAL = SLOT_ON_TIME + 2;
export const SLOTS = SLOT_ON_TIME + 3;

/**
 * The slot of a pane of `kind` emitted at log time `at` for window [start, end) by a policy with
 * early panes every `earlyEveryMs` (not for retracts).
 */
export function slotOf(
  kind: Exclude<PaneKind, "retract">,
  start: number,
  end: number,
  at: number,
  earlyEveryMs: number | null,
): number {
  if (kind === "early") return AGE_BUCKETS.indexOf(ageBucketOf(start, end, at, earlyEveryMs ?? 0));
  return kind === "on-time" ? SLOT_ON_TIME : kind === "late" ? SLOT_LATE : SLOT_FINAL;
}

/** The first early slot after the window's end ("1+0"). */
const SLOT_AFTER_END = AGE_BUCKETS.indexOf("1+0");

/**
 * Version-6 snapshots' slots (before the after-end buckets: "0-0.25" … "0.75-1", "1+", on-time,
 * late, final) → today's; "1+" pooled early panes of different ages, so its figures are dropped
 * (-1) and measured again (docs/semantics.md, "Snapshot").
 */
export const V6_SLOTS: readonly number[] = [0, 1, 2, 3, -1, SLOT_ON_TIME, SLOT_LATE, SLOT_FINAL];

/** A version-6 `lastSlot` (the kind of the pane a retract retracts): "1+" becomes the first after-end bucket. */
export function slotFromV6(slot: number): number {
  if (slot < 0) return slot;
  const to = V6_SLOTS[slot] ?? -1;
  return to >= 0 ? to : SLOT_AFTER_END;
}

export function kindOfSlot(slot: number): BiasStage {
  return slot < SLOT_ON_TIME ? "early" : slot === SLOT_ON_TIME ? "on-time" : slot === SLOT_LATE ? "late" : "final";
}

export function ageOfSlot(slot: number): AgeBucket | undefined {
  return slot < SLOT_ON_TIME ? AGE_BUCKETS[slot] : undefined;
}

function label(slot: number, scope: "service" | "policy", provisional: boolean): BiasLabel {
  const age = ageOfSlot(slot);
  const stage = kindOfSlot(slot);
  return Object.freeze(age === undefined ? { stage, scope, provisional } : { stage, age, scope, provisional });
}

const table = (scope: "service" | "policy", provisional: boolean): readonly BiasLabel[] =>
  Array.from({ length: SLOTS }, (_, slot) => label(slot, scope, provisional));

/** One frozen label per (scope, provisional, slot): trackers share them. */
export const LABELS = {
  service: table("service", false),
  policy: table("policy", false),
  provisionalService: table("service", true),
  provisionalPolicy: table("policy", true),
} as const;
