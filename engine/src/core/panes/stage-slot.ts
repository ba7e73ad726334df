/**
 * The stages a policy's value of a window is measured at (docs/semantics.md, "Measured bias"): the
 * five early age buckets (AGE_BUCKETS, the elapsed fraction of the window at emission), on-time,
 * late and final. A slot is the index of one of them; bias trackers, emit delays and the values a
 * window recorded are kept per slot.
 */
import { AGE_BUCKETS, ageBucketOf, type AgeBucket, type BiasStage, type PaneKind } from "../../protocol.js";
import type { BiasLabel } from "../dial/bias.js";

export const SLOT_ON_TIME = AGE_BUCKETS.length;
export const SLOT_LATE = SLOT_ON_TIME + 1;
export const SLOT_FINAL = SLOT_ON_TIME + 2;
export const SLOTS = SLOT_ON_TIME + 3;

/** The slot of a pane of `kind` emitted at log time `at` for window [start, end) (not for retracts). */
export function slotOf(kind: Exclude<PaneKind, "retract">, start: number, end: number, at: number): number {
  if (kind === "early") return AGE_BUCKETS.indexOf(ageBucketOf(start, end, at));
  return kind === "on-time" ? SLOT_ON_TIME : kind === "late" ? SLOT_LATE : SLOT_FINAL;
}

export function stageOfSlot(slot: number): BiasStage {
  return slot < SLOT_ON_TIME ? "early" : slot === SLOT_ON_TIME ? "on-time" : slot === SLOT_LATE ? "late" : "final";
}

export function ageOfSlot(slot: number): AgeBucket | undefined {
  return slot < SLOT_ON_TIME ? AGE_BUCKETS[slot] : undefined;
}

function label(slot: number, scope: "service" | "policy", provisional: boolean): BiasLabel {
  const age = ageOfSlot(slot);
  const stage = stageOfSlot(slot);
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
