/**
 * Pane progress of one (window, key), every policy's in one plain array (docs/decisions/0049-compact-state.md,
 * "Second pass"): STRIDE slots per policy, no object per (policy, window, key). Slots hold small
 * integers (V8 keeps them unboxed) or a reference:
 *
 * - FLAGS: 0 while the policy has no track for the key; else HAS + lateDirty · DIRTY + (lastSlot + 1) · SLOT_UNIT
 *   (added, not or-ed: a lastSlot a snapshot holds reads back as it was, however large);
 * - SEQ: the next pane's seq; COUNT: the aggregate's count at the last pane (early panes skip an unchanged key);
 * - LATE: late events accepted (the pane field `lateAccepted`);
 * - LAST: what the mode keeps of the last pane — the retracting policy's value (as ValueNumbers,
 *   windows/value-numbers.ts: the aggregate's kept array, the same one while its count is unchanged;
 *   a value with `latencyAbove` as it is), the discarding policy's aggregate, or null;
 * - POINTS: service keys, what the policy showed at each pane kind (kind-points.ts), or null.
 */
import type { PaneValue } from "../../protocol.js";
import type { Aggregate } from "../windows/aggregate.js";
import { numbersOfValue, valueOfNumbers, type ValueNumbers } from "../windows/value-numbers.js";
import type { KindPoints } from "./kind-points.js";

/** One key's tracks: policies × STRIDE slots (see the file comment). */
export type PaneTracks = (number | ValueNumbers | PaneValue | Aggregate | KindPoints | null)[];

export const STRIDE = 6;
const FLAGS = 0;
const SEQ = 1;
const COUNT = 2;
const LATE = 3;
const LAST = 4;
const POINTS = 5;

const HAS = 1;
const DIRTY = 2;
const SLOT_UNIT = 4;

/** No track for any of `policies` policies yet. */
export function newPaneTracks(policies: number): PaneTracks {
  // Exactly sized and filled (a holey array, or one grown by pushes, keeps slack).
  return new Array<number | null>(policies * STRIDE).fill(0);
}

/** True once the policy has a track for the key (a pane or a late event). */
export function hasTrack(t: PaneTracks | null | undefined, policy: number): boolean {
  return t !== null && t !== undefined && t[policy * STRIDE + FLAGS] !== 0;
}

/** Makes the policy's track (idempotent): seq 0, count 0, no value, no late events, lastSlot −1. */
export function openTrack(t: PaneTracks, policy: number): void {
  const b = policy * STRIDE;
  if (t[b + FLAGS] !== 0) return;
  t[b + FLAGS] = HAS;
  t[b + SEQ] = 0;
  t[b + COUNT] = 0;
  t[b + LATE] = 0;
  t[b + LAST] = null;
  t[b + POINTS] = null;
}

export function seqOf(t: PaneTracks, policy: number): number {
  return t[policy * STRIDE + SEQ] as number;
}
export function setSeq(t: PaneTracks, policy: number, seq: number): void {
  t[policy * STRIDE + SEQ] = seq;
}

/** The aggregate's count at the policy's last pane; undefined when the policy has no track. */
export function lastCountOf(t: PaneTracks | null | undefined, policy: number): number | undefined {
  return hasTrack(t, policy) ? ((t as PaneTracks)[policy * STRIDE + COUNT] as number) : undefined;
}
export function setLastCount(t: PaneTracks, policy: number, count: number): void {
  t[policy * STRIDE + COUNT] = count;
}

export function lateAcceptedOf(t: PaneTracks, policy: number): number {
  return t[policy * STRIDE + LATE] as number;
}

export function isLateDirty(t: PaneTracks | null | undefined, policy: number): boolean {
  return hasTrack(t, policy) && dirtyIn((t as PaneTracks)[policy * STRIDE + FLAGS] as number);
}

/** Slot of the policy's last pane (kind-slot.ts); −1 before its first. */
export function lastSlotOf(t: PaneTracks, policy: number): number {
  return Math.floor((t[policy * STRIDE + FLAGS] as number) / SLOT_UNIT) - 1;
}

/** Sets lastSlot and clears lateDirty (a pane was emitted). */
export function setLastSlot(t: PaneTracks, policy: number, slot: number): void {
  t[policy * STRIDE + FLAGS] = HAS + (slot + 1) * SLOT_UNIT;
}

/** `events` late events accepted for the key (track made): lateAccepted grows, lateDirty set. */
export function addLate(t: PaneTracks, policy: number, events: number): void {
  openTrack(t, policy);
  const b = policy * STRIDE;
  t[b + LATE] = (t[b + LATE] as number) + events;
  const flags = t[b + FLAGS] as number;
  if (!dirtyIn(flags)) t[b + FLAGS] = flags + DIRTY;
}

export function clearLateDirty(t: PaneTracks, policy: number): void {
  const b = policy * STRIDE;
  const flags = t[b + FLAGS] as number;
  if (dirtyIn(flags)) t[b + FLAGS] = flags - DIRTY;
}

/** The retracting policy's last pane value (rebuilt as the frozen object it was), or null. */
export function lastValueOf(t: PaneTracks, policy: number): PaneValue | null {
  const v = t[policy * STRIDE + LAST];
  if (v === null || v === undefined || typeof v === "number") return null;
  if (Array.isArray(v)) return valueOfNumbers(v as ValueNumbers);
  return isAggregate(v) ? null : (v as PaneValue);
}
/** `numbers`: the value's own (the aggregate's kept array, shared), when the caller has them. */
export function setLastValue(t: PaneTracks, policy: number, v: PaneValue | null, numbers?: ValueNumbers): void {
  t[policy * STRIDE + LAST] = v === null ? null : v.latencyAbove !== undefined ? v : (numbers ?? numbersOfValue(v));
}

/** The discarding policy's aggregate at its last pane, or null. */
export function lastAggOf(t: PaneTracks, policy: number): Aggregate | null {
  const v = t[policy * STRIDE + LAST];
  return typeof v === "object" && v !== null && isAggregate(v) ? (v as Aggregate) : null;
}
export function setLastAgg(t: PaneTracks, policy: number, a: Aggregate | null): void {
  t[policy * STRIDE + LAST] = a;
}

export function pointsOfTrack(t: PaneTracks | null | undefined, policy: number): KindPoints | null | undefined {
  return hasTrack(t, policy) ? ((t as PaneTracks)[policy * STRIDE + POINTS] as KindPoints | null) : undefined;
}
export function setPoints(t: PaneTracks, policy: number, p: KindPoints | null): void {
  t[policy * STRIDE + POINTS] = p;
}

/** A track's fields as a snapshot holds them (snapshot-parts.ts); a mode keeps a last value or a last aggregate, never both. */
export interface TrackFields {
  seq: number;
  lastCount: number;
  lastValue: PaneValue | null;
  lastAgg: Aggregate | null;
  lateAccepted: number;
  lateDirty: boolean;
  points: KindPoints | null;
  lastSlot: number;
}

export function setTrack(t: PaneTracks, policy: number, f: TrackFields): void {
  const b = policy * STRIDE;
  t[b + FLAGS] = HAS + (f.lateDirty ? DIRTY : 0) + (f.lastSlot + 1) * SLOT_UNIT;
  t[b + SEQ] = f.seq;
  t[b + COUNT] = f.lastCount;
  t[b + LATE] = f.lateAccepted;
  t[b + LAST] = f.lastAgg;
  if (f.lastValue !== null) setLastValue(t, policy, f.lastValue);
  t[b + POINTS] = f.points;
}

function dirtyIn(flags: number): boolean {
  return Math.floor(flags / DIRTY) % 2 === 1;
}

function isAggregate(v: object): boolean {
  return typeof (v as Partial<Aggregate>).value === "function";
}
