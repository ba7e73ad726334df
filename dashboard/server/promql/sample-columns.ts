/**
 * A series' present samples over the span a query can reach, read once per query into typed arrays:
 * every step then finds its samples by binary search over plain numbers instead of asking the
 * series sample by sample (docs/prometheus-api.md, "Sizing").
 */
import { upperBound, type SeriesView } from "./queryable.js";

export class SampleColumns {
  readonly times: Float64Array;
  readonly values: Float64Array;
  /** The view's index of each sample (for touch() and sampleLabels()). */
  readonly rows: Int32Array;
  readonly length: number;
  /** Samples up to this index were touched (a query's steps ascend, so its ranges only move forward). */
  touchedTo = 0;
  private sums: Float64Array | null | undefined;
  /** Where seek() last stopped, per cursor. */
  private readonly cursors = [0, 0];

  /** The present samples of `view` with a time in (fromMs, toMs]. */
  constructor(
    readonly view: SeriesView,
    fromMs: number,
    toMs: number,
  ) {
    const lo = upperBound(view, fromMs);
    const hi = upperBound(view, toMs);
    const size = Math.max(0, hi - lo);
    this.times = new Float64Array(size);
    this.values = new Float64Array(size);
    this.rows = new Int32Array(size);
    this.length = view.readPresent
      ? view.readPresent(lo, hi, this.times, this.values, this.rows)
      : readOneByOne(view, lo, hi, this.times, this.values, this.rows);
  }

  /**
   * upperBound(t) for a caller whose t mostly ascends (a range query's steps): cursor k walks on
   * from where it last stopped, a few samples linearly, then by binary search; a t that went back
   * searches from the start.
   */
  seek(k: 0 | 1, t: number): number {
    const times = this.times;
    let j = this.cursors[k] as number;
    if (j > 0 && (times[j - 1] as number) > t) j = this.upperBound(t);
    else {
      const end = Math.min(this.length, j + 8);
      while (j < end && (times[j] as number) <= t) j++;
      if (j === end) j = this.upperBound(t, j);
    }
    this.cursors[k] = j;
    return j;
  }

  /** First sample index at or after `from` whose time is greater than t. */
  upperBound(t: number, from = 0): number {
    const times = this.times;
    let lo = from;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((times[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Prefix sums of the values (sums[j] = values[0] + … + values[j − 1]) when they are exact — every
   * value an integer and every partial sum within 2^53 — so that sums[hi] − sums[lo] is the sum of a
   * range however it is added up; else null.
   */
  exactSums(): Float64Array | null {
    if (this.sums !== undefined) return this.sums;
    const sums = new Float64Array(this.length + 1);
    let sum = 0;
    for (let j = 0; j < this.length; j++) {
      const v = this.values[j] as number;
      sum += v;
      if (!Number.isInteger(v) || !Number.isSafeInteger(sum)) return (this.sums = null);
      sums[j + 1] = sum;
    }
    return (this.sums = sums);
  }

  /** Touches the samples in [lo, hi) not touched yet, newest first. */
  touch(lo: number, hi: number): void {
    for (let j = hi - 1; j >= Math.max(lo, this.touchedTo); j--) this.view.touch(this.rows[j] as number);
    if (hi > this.touchedTo) this.touchedTo = hi;
  }
}

function readOneByOne(
  view: SeriesView,
  lo: number,
  hi: number,
  times: Float64Array,
  values: Float64Array,
  rows: Int32Array,
): number {
  let n = 0;
  for (let i = lo; i < hi; i++) {
    if (!view.present(i)) continue;
    times[n] = view.time(i);
    values[n] = view.value(i);
    rows[n] = i;
    n++;
  }
  return n;
}
