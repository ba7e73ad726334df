/**
 * What a policy showed of one (window, service) at each pane kind (docs/semantics.md, "Measured
 * bias"): per slot (kind-slot.ts) the value of its last service-level pane there — count, errors,
 * p99, users — and the nowcast it published with it (count, error rate, p99, users; NaN when
 * none). One small record per (window, service, policy), allocated with its first pane; a bit mask
 * says which slots hold a value. Read when the reference closes the window.
 */
import type { PaneNowcast, PaneValue } from "../../protocol.js";
import type { BiasPoint } from "../dial/bias.js";

/** Numbers per slot: the value's four, then the nowcast's four. */
export const POINT_FIELDS = 8;
/** `rows` holds a row index (< SLOTS ≤ 13) per slot in base ROW_BASE: 4 bits each, up to 52 bits of a double. */
const ROW_BASE = 16;
const ROW_SCALE: readonly number[] = Array.from({ length: 13 }, (_, s) => ROW_BASE ** s);

/**
 * Only the slots shown so far are held (docs/decisions/0019-core-light.md): `v` has one row of
 * POINT_FIELDS numbers per set slot, in the order the slots were first shown, and `rows` holds each
 * slot's row index as a base-16 digit. A plain array of doubles: for a few rows a typed array's
 * headers would cost more than the numbers.
 */
export interface KindPoints {
  /** Bit `slot` set: the slot holds a value. */
  mask: number;
  /** Row of slot s in `v`: digit s of `rows` in base ROW_BASE, valid where `mask` has bit s. */
  rows: number;
  v: number[];
}

export type NowcastValue = PaneNowcast["value"];

export function newKindPoints(): KindPoints {
  return { mask: 0, rows: 0, v: [] };
}

/** Index in `v` of the slot's first number; -1 when the slot holds no value. */
export function pointOffset(p: KindPoints, slot: number): number {
  if (!(p.mask & (1 << slot))) return -1;
  return (Math.floor(p.rows / (ROW_SCALE[slot] as number)) % ROW_BASE) * POINT_FIELDS;
}

/** The slot's row, added (exactly sized: rows are few and added one at a time) when it had none. */
function rowOf(p: KindPoints, slot: number): number {
  const at = pointOffset(p, slot);
  if (at >= 0) return at;
  const row = p.v.length / POINT_FIELDS;
  const grown = new Array<number>(p.v.length + POINT_FIELDS);
  for (let i = 0; i < p.v.length; i++) grown[i] = p.v[i] as number;
  p.v = grown;
  p.rows += row * (ROW_SCALE[slot] as number);
  p.mask |= 1 << slot;
  return row * POINT_FIELDS;
}

/** Sets the slot's eight numbers (value's four, nowcast's four; NaN nowcast = none), replacing earlier ones. */
export function setPoint(
  p: KindPoints,
  slot: number,
  count: number,
  errors: number,
  p99: number,
  users: number,
  nowcast: NowcastValue | null,
): void {
  const at = rowOf(p, slot);
  const v = p.v;
  v[at] = count;
  v[at + 1] = errors;
  v[at + 2] = p99;
  v[at + 3] = users;
  v[at + 4] = nowcast?.count ?? NaN;
  v[at + 5] = nowcast?.errorRate ?? NaN;
  v[at + 6] = nowcast?.p99 ?? NaN;
  v[at + 7] = nowcast?.users ?? NaN;
}

/** Records the value (and nowcast, if any) shown at `slot`, replacing an earlier one. */
export function recordPoint(p: KindPoints, slot: number, value: PaneValue, nowcast: NowcastValue | null): void {
  setPoint(p, slot, value.count, value.errors, value.p99, value.users, nowcast);
}

export function hasPoint(p: KindPoints | null | undefined, slot: number): boolean {
  return p !== null && p !== undefined && (p.mask & (1 << slot)) !== 0;
}

/** The value shown at `slot`, or null. */
export function pointAt(p: KindPoints | null | undefined, slot: number): BiasPoint | null {
  if (!hasPoint(p, slot)) return null;
  const v = (p as KindPoints).v;
  const at = pointOffset(p as KindPoints, slot);
  return { count: v[at] as number, errors: v[at + 1] as number, p99: v[at + 2] as number, users: v[at + 3] as number };
}

/** The nowcast published at `slot`, or null. */
export function nowcastAt(p: KindPoints | null | undefined, slot: number): NowcastValue | null {
  if (!hasPoint(p, slot)) return null;
  const v = (p as KindPoints).v;
  const at = pointOffset(p as KindPoints, slot) + 4;
  if (Number.isNaN(v[at])) return null;
  return {
    count: v[at] as number,
    errorRate: v[at + 1] as number,
    p99: v[at + 2] as number,
    users: v[at + 3] as number,
  };
}
