/**
 * What a policy showed of one (window, service) at each stage (docs/semantics.md, "Measured
 * bias"): per slot (stage-slot.ts) the value of its last service-level pane there — count, errors,
 * p99, users — and the nowcast it published with it (count, error rate, p99, users; NaN when
 * none). One typed array per (window, service, policy), allocated with its first pane; a bit mask
 * says which slots hold a value. Read when the reference closes the window.
 */
import type { PaneNowcast, PaneValue } from "../protocol.js";
import type { BiasPoint } from "./bias.js";
import { SLOTS } from "./stage-slot.js";

/** Numbers per slot: the value's four, then the nowcast's four. */
export const POINT_FIELDS = 8;

export interface StagePoints {
  /** Bit `slot` set: the slot holds a value. */
  mask: number;
  readonly v: Float64Array;
}

export type NowcastValue = PaneNowcast["value"];

export function newStagePoints(): StagePoints {
  return { mask: 0, v: new Float64Array(SLOTS * POINT_FIELDS) };
}

/** Records the value (and nowcast, if any) shown at `slot`, replacing an earlier one. */
export function recordPoint(p: StagePoints, slot: number, value: PaneValue, nowcast: NowcastValue | null): void {
  const at = slot * POINT_FIELDS;
  const v = p.v;
  v[at] = value.count;
  v[at + 1] = value.errors;
  v[at + 2] = value.p99;
  v[at + 3] = value.users;
  v[at + 4] = nowcast?.count ?? NaN;
  v[at + 5] = nowcast?.errorRate ?? NaN;
  v[at + 6] = nowcast?.p99 ?? NaN;
  v[at + 7] = nowcast?.users ?? NaN;
  p.mask |= 1 << slot;
}

export function hasPoint(p: StagePoints | null | undefined, slot: number): boolean {
  return p !== null && p !== undefined && (p.mask & (1 << slot)) !== 0;
}

/** The value shown at `slot`, or null. */
export function pointAt(p: StagePoints | null | undefined, slot: number): BiasPoint | null {
  if (!hasPoint(p, slot)) return null;
  const v = (p as StagePoints).v;
  const at = slot * POINT_FIELDS;
  return { count: v[at] as number, errors: v[at + 1] as number, p99: v[at + 2] as number, users: v[at + 3] as number };
}

/** The nowcast published at `slot`, or null. */
export function nowcastAt(p: StagePoints | null | undefined, slot: number): NowcastValue | null {
  if (!hasPoint(p, slot)) return null;
  const v = (p as StagePoints).v;
  const at = slot * POINT_FIELDS + 4;
  if (Number.isNaN(v[at])) return null;
  return {
    count: v[at] as number,
    errorRate: v[at + 1] as number,
    p99: v[at + 2] as number,
    users: v[at + 3] as number,
  };
}
