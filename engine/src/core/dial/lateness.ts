/**
 * Correlated lateness (docs/semantics.md, "Correlated lateness"): per (policy, service), the
 * events that missed the policy's on-time pane (accepted late or dropped) against those on time,
 * with their errors, over the last N windows the reference closed (of the smallest window size, so
 * each event counts once). Flagged when a two-proportion z test (pooled proportion) says the late
 * error rate differs (two-sided p < 0.01) and the effect is large enough to matter: at least 1 pp
 * and a ratio of at least 1.5 (or at most −1 pp and 1/1.5), so a large stream does not flag noise.
 */
import type { LatenessCorrelation } from "../../protocol.js";
import { normalTwoSidedP } from "./student-t.js";

/** Two-sided p below which the difference is significant. */
export const LATENESS_ALPHA = 0.01;
/** Minimum absolute difference of error rates, as a fraction (1 pp). */
export const LATENESS_MIN_DIFF = 0.01;
/** Minimum ratio of error rates (or its inverse for a lower late rate). */
export const LATENESS_MIN_RATIO = 1.5;

const FIELDS = 4;

/** The last `size` windows' counts of one (policy, service): on-time events, errors, late events, errors. */
export class LatenessWindow {
  private ring: Float64Array;
  private n = 0;
  private next = 0;
  private cached: LatenessCorrelation | null = null;

  constructor(readonly size: number) {
    this.ring = new Float64Array(FIELDS * size);
  }

  get windows(): number {
    return this.n;
  }

  push(onTimeEvents: number, onTimeErrors: number, lateEvents: number, lateErrors: number): void {
    const at = FIELDS * this.next;
    this.ring[at] = onTimeEvents;
    this.ring[at + 1] = onTimeErrors;
    this.ring[at + 2] = lateEvents;
    this.ring[at + 3] = lateErrors;
    this.next = (this.next + 1) % this.size;
    if (this.n < this.size) this.n++;
    this.cached = null;
  }

  /** The windows' counts, oldest first (snapshots). */
  rows(): number[][] {
    const out: number[][] = [];
    const first = (this.next - this.n + this.size) % this.size;
    for (let k = 0; k < this.n; k++) {
      const at = FIELDS * ((first + k) % this.size);
      out.push([...this.ring.subarray(at, at + FIELDS)]);
    }
    return out;
  }

  correlation(): LatenessCorrelation {
    if (this.cached !== null) return this.cached;
    const sums = [0, 0, 0, 0];
    for (let i = 0; i < this.n; i++)
      for (let f = 0; f < FIELDS; f++) sums[f] = (sums[f] as number) + (this.ring[FIELDS * i + f] as number);
    const [onTimeEvents, onTimeErrors, lateEvents, lateErrors] = sums as [number, number, number, number];
    return (this.cached = Object.freeze(correlate(onTimeEvents, onTimeErrors, lateEvents, lateErrors)));
  }
}

/** The two-proportion z test of late vs on-time error rates, and the flag. */
export function correlate(
  onTimeEvents: number,
  onTimeErrors: number,
  lateEvents: number,
  lateErrors: number,
): LatenessCorrelation {
  const base = { onTimeEvents, onTimeErrors, lateEvents, lateErrors };
  if (onTimeEvents === 0 || lateEvents === 0) return { ...base, z: null, p: null, ratio: null, flagged: false };
  const onRate = onTimeErrors / onTimeEvents;
  const lateRate = lateErrors / lateEvents;
  const ratio = onRate === 0 ? null : lateRate / onRate;
  const pooled = (onTimeErrors + lateErrors) / (onTimeEvents + lateEvents);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / onTimeEvents + 1 / lateEvents));
  if (se === 0) return { ...base, z: null, p: null, ratio, flagged: false };
  const z = (lateRate - onRate) / se;
  const p = normalTwoSidedP(z);
  const diff = lateRate - onRate;
  // ratio null: no on-time error at all, any late excess is an unbounded ratio.
  const higher = diff >= LATENESS_MIN_DIFF && (ratio === null || ratio >= LATENESS_MIN_RATIO);
  const lower = diff <= -LATENESS_MIN_DIFF && ratio !== null && ratio <= 1 / LATENESS_MIN_RATIO;
  return { ...base, z, p, ratio, flagged: p < LATENESS_ALPHA && (higher || lower) };
}

export const NO_LATENESS: LatenessCorrelation = Object.freeze(correlate(0, 0, 0, 0));
