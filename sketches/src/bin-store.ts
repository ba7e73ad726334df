import { SketchError } from "./errors.js";
import { approxLog2, type LogMapping } from "./log-mapping.js";

/** Bin counts: the narrowest array that holds the largest count (see `widen`). */
type Counts = Uint8Array | Uint16Array | Uint32Array | Float64Array;
const EMPTY: Counts = new Uint8Array(0);
/** Largest count each width holds; past 2^32 − 1 counts are doubles (exact to 2^53). */
const WIDTH_LIMITS = [0xff, 0xffff, 0xffffffff, Infinity];
/** Key sentinels (small integers, so V8 keeps them unboxed); real keys stay within ±4·10^6. */
export const NO_KEY_HIGH = 2 ** 30;
export const NO_KEY_LOW = -(2 ** 30);
/** Beyond this many bins the lowest collapse (docs/decisions/0003-own-sketches.md, "Decision"). */
export const MAX_BINS = 2048;

/**
 * approxLog2 of the last value asked, remembered: an engine adds each latency to several sketches
 * in a row (two window sizes × service and route), so three of four adds skip the computation.
 */
let lastValue = NaN;
let lastLog2 = NaN;

function log2Of(value: number): number {
  if (value !== lastValue) {
    lastLog2 = approxLog2(value);
    lastValue = value;
  }
  return lastLog2;
}
/**
 * The binned form of a DDSketch: dense counts of consecutive keys (at most MAX_BINS wide; beyond,
 * the lowest bins collapse into `floor`), a zero count, and the exact count, sum, min and max
 * beside them. Counts start one byte each and widen (2, 4, then 8 bytes) the first time a bin
 * outgrows its width: a window's key sees a few events per bin, so most stores stay one byte a bin
 * (docs/decisions/0015-light-state.md).
 */
export class BinStore {
  /** The counts; their width is the array's (a count that does not fit reads back changed: then it widens). */
  private counts: Counts = EMPTY;
  /** Key of counts[0]. */
  private offset = 0;
  /** Smallest and largest key with a non-zero count; NO_KEY_HIGH/NO_KEY_LOW when none. */
  minKey = NO_KEY_HIGH;
  maxKey = NO_KEY_LOW;
  /** Sum of the bin counts (zeros excluded). */
  total = 0;
  /** Keys below this were collapsed into it; NO_KEY_LOW until the first collapse. */
  floor = NO_KEY_LOW;
  zeroCount = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  constructor(readonly mapping: LogMapping) {}

  get count(): number {
    return this.zeroCount + this.total;
  }

  /** Adds a validated value (finite, ≥ 0) `n` times. */
  add(value: number, n: number): void {
    if (value === 0) this.zeroCount += n;
    else this.addKey(Math.ceil(log2Of(value) * this.mapping.multiplier), n);
    this.sum += value * n;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /** Adds `size` sorted values; the largest first, so the array is sized once for the whole span. */
  addSorted(values: number[], size: number): void {
    if (size === 0) return;
    this.add(values[size - 1] as number, 1);
    for (let i = 0; i < size - 1; i++) this.add(values[i] as number, 1);
  }

  addKey(key: number, n: number): void {
    if (key < this.floor) key = this.floor;
    let i = key - this.offset;
    if (i < 0 || i >= this.counts.length) {
      key = this.grow(key);
      i = key - this.offset;
    }
    this.store(i, (this.counts[i] as number) + n);
    this.total += n;
    if (key < this.minKey) this.minKey = key;
    if (key > this.maxKey) this.maxKey = key;
  }

  /** Count held by a key (after collapsing), 0 when absent. */
  countAt(key: number): number {
    if (key < this.floor) key = this.floor;
    const i = key - this.offset;
    return i >= 0 && i < this.counts.length ? (this.counts[i] as number) : 0;
  }

  /** Removes a value added before; throws TM_SKETCH_NOT_SUBSET (changing nothing) if absent. */
  remove(value: number, n: number): void {
    if (value === 0) {
      if (this.zeroCount < n) throw notSubset(`zero count ${this.zeroCount} < ${n}`);
      this.zeroCount -= n;
    } else {
      this.removeKey(this.mapping.key(value), n);
    }
    this.sum -= value * n;
    this.afterRemoval(value, value);
  }

  merge(other: BinStore): void {
    for (let k = other.minKey; k <= other.maxKey; k++) {
      const c = other.counts[k - other.offset] as number;
      if (c !== 0) this.addKey(k, c);
    }
    this.zeroCount += other.zeroCount;
    this.sum += other.sum;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
  }

  /** Removes every value of `other`; checks all bins first so a failure changes nothing. */
  subtract(other: BinStore): void {
    if (other.zeroCount > this.zeroCount) throw notSubset(`zero count ${this.zeroCount} < ${other.zeroCount}`);
    let folded = 0;
    for (let k = other.minKey; k <= other.maxKey; k++) {
      const c = other.counts[k - other.offset] as number;
      if (c === 0) continue;
      if (k <= this.floor) folded += c;
      else if (this.countAt(k) < c) throw notSubset(`bin ${k}`);
    }
    if (folded > 0 && this.countAt(this.floor) < folded) throw notSubset(`bin ${this.floor}`);
    for (let k = other.minKey; k <= other.maxKey; k++) {
      const c = other.counts[k - other.offset] as number;
      if (c !== 0) this.removeKey(k, c);
    }
    this.zeroCount -= other.zeroCount;
    this.sum -= other.sum;
    this.afterRemoval(other.min, other.max);
  }

  /** The key holding the element of 0-based rank `rank` among the binned values. */
  keyAtRank(rank: number): number {
    let cum = 0;
    for (let k = this.minKey; k <= this.maxKey; k++) {
      cum += this.counts[k - this.offset] as number;
      if (cum > rank) return k;
    }
    return this.maxKey;
  }

  /**
   * keyAtRank for each of the ascending `ranks`: the lower half of the ranks in one pass up from
   * the smallest key, the upper half (p90, p99, … sit near the top) in one pass down from the
   * largest. Counts are integers, so the cumulative counts below a key (total − the counts from
   * it up) are exact and both passes find the same keys as keyAtRank.
   */
  keysAtRanks(ranks: readonly number[]): number[] {
    const n = ranks.length;
    const out = new Array<number>(n);
    let split = 0;
    while (split < n && (ranks[split] as number) < this.total / 2) split++;
    let cum = 0;
    let r = 0;
    for (let k = this.minKey; k <= this.maxKey && r < split; k++) {
      cum += this.counts[k - this.offset] as number;
      while (r < split && cum > (ranks[r] as number)) out[r++] = k;
    }
    while (r < split) out[r++] = this.maxKey;
    let below = this.total;
    r = n - 1;
    for (let k = this.maxKey; k >= this.minKey && r >= split; k--) {
      below -= this.counts[k - this.offset] as number;
      while (r >= split && below <= (ranks[r] as number)) out[r--] = k;
    }
    while (r >= split) out[r--] = this.total === 0 ? this.maxKey : this.minKey;
    return out;
  }

  /** Calls fn(key, count) for each non-empty bin in key order. */
  forEachBin(fn: (key: number, count: number) => void): void {
    for (let k = this.minKey; k <= this.maxKey; k++) {
      const c = this.counts[k - this.offset] as number;
      if (c !== 0) fn(k, c);
    }
  }

  clone(): BinStore {
    const c = new BinStore(this.mapping);
    c.counts = this.total === 0 ? EMPTY : this.counts.slice();
    c.offset = this.offset;
    c.minKey = this.minKey;
    c.maxKey = this.maxKey;
    c.total = this.total;
    c.floor = this.floor;
    c.zeroCount = this.zeroCount;
    c.sum = this.sum;
    c.min = this.min;
    c.max = this.max;
    return c;
  }

  /** Allocated bytes of the counts array. */
  get capacityBytes(): number {
    return this.counts.byteLength;
  }

  /** Bytes of the counts from the smallest to the largest non-empty key, at their width (no slack). */
  get spanBytes(): number {
    return this.total === 0 ? 0 : (this.maxKey - this.minKey + 1) * this.counts.BYTES_PER_ELEMENT;
  }

  private removeKey(key: number, n: number): void {
    if (key < this.floor) key = this.floor;
    const have = this.countAt(key);
    if (have < n) throw notSubset(`bin ${key} holds ${have} < ${n}`);
    this.counts[key - this.offset] = have - n;
    this.total -= n;
    if (have === n && (key === this.minKey || key === this.maxKey)) this.rescan();
  }

  private grow(key: number): number {
    const lo = Math.min(this.minKey, key);
    const hi = Math.max(this.maxKey, key);
    if (hi - lo + 1 > MAX_BINS) {
      this.raiseFloor(hi - MAX_BINS + 1);
      if (key < this.floor) key = this.floor;
    }
    const newLo = Math.max(lo, this.floor);
    const span = hi - newLo + 1;
    // Geometric in the span (amortized O(1) growth), not in the old length: a sketch whose keys
    // arrive alternately below and above must not double its array each time.
    const len = Math.min(MAX_BINS, span + (span >> 2) + 8);
    const slack = len - span;
    // Most of the slack on the side that grew; split evenly for the first key.
    const below = this.total === 0 ? slack >> 1 : key <= this.minKey ? slack - (slack >> 2) : slack >> 2;
    this.reallocate(newLo - below, len);
    return key;
  }

  /** Folds every bin below `floor` into it. */
  private raiseFloor(floor: number): void {
    let folded = 0;
    for (let k = this.minKey; k < floor && k <= this.maxKey; k++) {
      const i = k - this.offset;
      folded += this.counts[i] as number;
      this.counts[i] = 0;
    }
    this.floor = floor;
    if (folded === 0) return;
    if (floor - this.offset >= this.counts.length)
      this.reallocate(floor, Math.min(MAX_BINS, Math.max(16, this.maxKey - floor + 1)));
    this.store(floor - this.offset, (this.counts[floor - this.offset] as number) + folded);
    this.minKey = floor;
    if (this.maxKey < floor) this.maxKey = floor;
  }

  /** counts[i] := c, widening the counts first when c does not fit their width. */
  private store(i: number, c: number): void {
    const counts = this.counts;
    counts[i] = c;
    if (counts[i] !== c) {
      this.widen(c);
      this.counts[i] = c;
    }
  }

  /** Re-allocates the counts at the narrowest width holding `count` (same keys, same offset). */
  private widen(count: number): void {
    let width = widthOf(this.counts);
    while ((WIDTH_LIMITS[width] as number) < count) width++;
    const next = allocate(width, this.counts.length);
    next.set(this.counts);
    this.counts = next;
  }

  private reallocate(offset: number, len: number): void {
    const next = allocate(widthOf(this.counts), len);
    for (let k = Math.max(this.minKey, offset); k <= this.maxKey && k < offset + len; k++) {
      next[k - offset] = this.counts[k - this.offset] as number;
    }
    this.counts = next;
    this.offset = offset;
  }

  private rescan(): void {
    if (this.total === 0) {
      this.minKey = NO_KEY_HIGH;
      this.maxKey = NO_KEY_LOW;
      return;
    }
    while (this.counts[this.minKey - this.offset] === 0) this.minKey++;
    while (this.counts[this.maxKey - this.offset] === 0) this.maxKey--;
  }

  /** After taking out values in [lo, hi]: keep the exact extremes still known, else bin-accurate ones. */
  private afterRemoval(lo: number, hi: number): void {
    if (this.count === 0) {
      this.sum = 0;
      this.min = Infinity;
      this.max = -Infinity;
      return;
    }
    if (this.sum < 0) this.sum = 0;
    const minGone = lo <= this.min;
    const maxGone = hi >= this.max;
    if (minGone) this.min = this.zeroCount > 0 ? 0 : Math.max(this.min, this.mapping.value(this.minKey));
    if (maxGone) this.max = this.total === 0 ? 0 : Math.min(this.max, this.mapping.value(this.maxKey));
    // Two bin-accurate stand-ins of one bin may cross the exact other extreme: keep the exact one.
    if (this.min > this.max) {
      if (minGone) this.min = this.max;
      else this.max = this.min;
    }
  }
}

/** Index into WIDTH_LIMITS of the counts' width: log2 of their bytes per count. */
function widthOf(counts: Counts): number {
  return 31 - Math.clz32(counts.BYTES_PER_ELEMENT);
}

function allocate(width: number, len: number): Counts {
  if (width === 0) return new Uint8Array(len);
  if (width === 1) return new Uint16Array(len);
  return width === 2 ? new Uint32Array(len) : new Float64Array(len);
}

export function notSubset(detail: string): SketchError {
  return new SketchError(
    "TM_SKETCH_NOT_SUBSET",
    `cannot remove values this DDSketch does not hold (${detail}); remove only what was added or merged in`,
  );
}
