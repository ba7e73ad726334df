import { KEY_LIMIT, decodeBins, encodeBins } from "./bin-codec.js";
import { BinStore, NO_KEY_LOW, notSubset } from "./bin-store.js";
import { decodeWith, type ByteReader } from "./byte-reader.js";
import { encodeWith, type ByteWriter } from "./byte-writer.js";
import { SketchError, corrupt, invalidCount, invalidOption, invalidValue } from "./errors.js";
import { LogMapping } from "./log-mapping.js";
import type { RequestInput } from "./request-input.js";
import { containsAll, countOf, insertSorted, removeSorted, sizeOf, sortedOfSize, sumOf } from "./sorted-values.js";

export { MAX_BINS } from "./bin-store.js";

export interface DDSketchOptions {
  /** Relative accuracy α of every quantile, in [0.0001, 0.5]; default 0.01. */
  relativeAccuracy?: number;
}

export const DEFAULT_RELATIVE_ACCURACY = 0.01;
/** A sketch holds its values exactly while it has at most this many, then bins them. */
export const EXACT_LIMIT = 16;
const VERSION = 1;
const TAG = 0x44; // "D"
const FLAG_NON_EMPTY = 1;
const FLAG_CUSTOM_ACCURACY = 2;
const FLAG_COLLAPSED = 4;
const FLAG_EXACT = 8;

/**
 * DDSketch (Masson, Rim, Lee, VLDB 2019): quantiles within relative accuracy α, mergeable.
 * Values must be ≥ 0 (latencies): negative or non-finite values throw; zeros are counted apart.
 * Up to EXACT_LIMIT values are kept as they are (sorted; quantiles exact, a few hundred bytes);
 * beyond, they are binned (logarithmic mapping, ≤ 2048 bins) with exact count, sum, min, max.
 */
export class DDSketch {
  private readonly mapping: LogMapping;
  /** The values themselves, sorted, while few (see sorted-values.ts); null once binned. */
  private values: number[] | null = null;
  /** The binned form once more than EXACT_LIMIT values came; then `values` is null. */
  private binned: BinStore | null = null;

  constructor(options: DDSketchOptions = {}) {
    this.mapping = LogMapping.of(options.relativeAccuracy ?? DEFAULT_RELATIVE_ACCURACY);
  }

  get relativeAccuracy(): number {
    return this.mapping.relativeAccuracy;
  }
  get count(): number {
    return this.binned !== null ? this.binned.count : sizeOf(this.values);
  }
  get sum(): number {
    return this.binned !== null ? this.binned.sum : sumOf(this.values);
  }
  /** Smallest value added; NaN when empty (bin-accurate once a removal took the smallest out). */
  get min(): number {
    if (this.binned !== null) return this.binned.count === 0 ? NaN : this.binned.min;
    return sizeOf(this.values) === 0 ? NaN : ((this.values as number[])[0] as number);
  }
  /** Largest value added; NaN when empty (bin-accurate once a removal took the largest out). */
  get max(): number {
    if (this.binned !== null) return this.binned.count === 0 ? NaN : this.binned.max;
    const n = sizeOf(this.values);
    return n === 0 ? NaN : ((this.values as number[])[n - 1] as number);
  }
  /** True while the sketch holds its values exactly (at most EXACT_LIMIT of them). */
  get isExact(): boolean {
    return this.binned === null;
  }

  add(value: number, count = 1): void {
    if (count !== 1 && !(Number.isSafeInteger(count) && count > 0)) throw invalidCount(count);
    if (!(value >= 0 && value < Infinity)) throw invalidValue("value", value);
    value += 0; // −0 → 0
    const binned = this.binned;
    if (binned !== null) {
      binned.add(value, count);
      return;
    }
    if (sizeOf(this.values) + count <= EXACT_LIMIT) {
      this.values = insertSorted(this.values, value, count);
    } else {
      this.toBinned().add(value, count);
    }
  }

  /**
   * add(input.latency) with what the input derived once (request-input.ts): the bin key at this
   * sketch's accuracy when the input holds it. The same bins, count, sum, min and max as add.
   */
  addInput(input: RequestInput): void {
    const binned = this.binned;
    if (binned === null || input.mapping !== this.mapping) return this.add(input.latency);
    const value = input.latency;
    if (value === 0) binned.zeroCount++;
    else binned.addKey(input.key, 1);
    binned.sum += value;
    if (value < binned.min) binned.min = value;
    if (value > binned.max) binned.max = value;
  }

  /** Removes `count` copies of a value added before (session windows); TM_SKETCH_NOT_SUBSET if absent. */
  remove(value: number, count = 1): void {
    if (!(Number.isSafeInteger(count) && count > 0)) throw invalidCount(count);
    if (!(value >= 0 && value < Infinity)) throw invalidValue("value", value);
    value += 0; // −0 → 0
    if (this.binned !== null) {
      this.binned.remove(value, count);
      return;
    }
    const have = countOf(this.values, value);
    if (have < count) throw notSubset(`value ${value} held ${have} times < ${count}`);
    removeSorted(this.values as number[], value, count);
  }

  /** Value at quantile q ∈ [0, 1] (the element of rank ⌊q·(count−1)⌋); NaN when empty. */
  quantile(q: number): number {
    if (!(q >= 0 && q <= 1)) throw invalidOption("q", q, "a number in [0, 1]");
    const b = this.binned;
    if (b === null) {
      const n = sizeOf(this.values);
      return n === 0 ? NaN : ((this.values as number[])[Math.floor(q * (n - 1))] as number);
    }
    if (b.count === 0) return NaN;
    const rank = q * (b.count - 1) - b.zeroCount;
    return this.binnedQuantile(q, rank >= 0 ? b.keyAtRank(rank) : 0);
  }

  /** quantile(q) for each of `qs`, with one pass over the bins (a pane asks for five). */
  quantiles(qs: readonly number[]): number[] {
    const b = this.binned;
    if (b === null || b.count === 0 || qs.length === 1) return qs.map((q) => this.quantile(q));
    let ascending = true;
    for (let i = 0; i < qs.length; i++) {
      const q = qs[i] as number;
      if (!(q >= 0 && q <= 1)) throw invalidOption("q", q, "a number in [0, 1]");
      if (i > 0 && q < (qs[i - 1] as number)) ascending = false;
    }
    if (ascending) {
      const ranks = new Array<number>(qs.length);
      for (let i = 0; i < qs.length; i++) ranks[i] = Math.max(0, (qs[i] as number) * (b.count - 1) - b.zeroCount);
      const values = b.keysAtRanks(ranks);
      for (let i = 0; i < qs.length; i++) values[i] = this.binnedQuantile(qs[i] as number, values[i] as number);
      return values;
    }
    const order = qs.map((_, i) => i).sort((i, j) => (qs[i] as number) - (qs[j] as number));
    const keys = b.keysAtRanks(order.map((i) => Math.max(0, (qs[i] as number) * (b.count - 1) - b.zeroCount)));
    const out = new Array<number>(qs.length);
    order.forEach((i, r) => (out[i] = this.binnedQuantile(qs[i] as number, keys[r] as number)));
    return out;
  }

  /** The binned answer for q given the key holding its rank among the binned values. */
  private binnedQuantile(q: number, key: number): number {
    const b = this.binned as BinStore;
    if (q === 0) return b.min;
    if (q === 1) return b.max;
    if (q * (b.count - 1) < b.zeroCount) return 0;
    const v = this.mapping.value(key);
    return v < b.min ? b.min : v > b.max ? b.max : v;
  }

  merge(other: DDSketch): void {
    this.checkCompatible(other);
    if (other.count === 0) return;
    if (other === this) other = this.clone();
    const theirs = other.values;
    const n = sizeOf(theirs);
    if (this.binned === null && theirs !== null && sizeOf(this.values) + n <= EXACT_LIMIT) {
      for (let i = 0; i < n; i++) this.values = insertSorted(this.values, theirs[i] as number, 1);
      return;
    }
    const binned = this.toBinned();
    if (other.binned !== null) binned.merge(other.binned);
    else binned.addSorted(theirs as number[], n);
  }

  /** Removes a sketch whose values were all added to (or merged into) this one. Atomic. */
  subtract(prefix: DDSketch): void {
    this.checkCompatible(prefix);
    if (prefix.count === 0) return;
    if (prefix === this) prefix = this.clone();
    const theirs = prefix.values;
    if (this.binned === null && theirs !== null) {
      if (!containsAll(this.values, theirs)) throw notSubset("a value of the prefix is missing");
      const n = sizeOf(theirs);
      for (let i = 0; i < n; i++) removeSorted(this.values as number[], theirs[i] as number, 1);
      return;
    }
    if (prefix.count > this.count) throw notSubset(`count ${this.count} < ${prefix.count}`);
    // On a copy when this is still exact, so a failed subtract leaves this as it was.
    const target = this.binned ?? this.clone().toBinned();
    target.subtract(prefix.binned ?? prefix.clone().toBinned());
    this.binned = target;
    this.values = null;
  }

  clone(): DDSketch {
    const c = new DDSketch({ relativeAccuracy: this.mapping.relativeAccuracy });
    c.values = this.values === null ? null : this.values.slice();
    c.binned = this.binned === null ? null : this.binned.clone();
    return c;
  }

  /** Non-empty bins as [key, count] pairs in key order (zeros apart), also for exact values. */
  bins(): [key: number, count: number][] {
    const store = this.binned ?? this.clone().toBinned();
    const out: [number, number][] = [];
    store.forEachBin((k, c) => out.push([k, c]));
    return out;
  }

  /** Approximate heap footprint in bytes (V8, 64-bit, measured by the benchmark). */
  heapBytes(): number {
    // Object 48 B; BinStore ~170 B with its boxed doubles; the counts array ~175 B of headers plus its bytes.
    if (this.binned !== null) return 48 + 170 + (this.binned.capacityBytes > 0 ? 175 + this.binned.capacityBytes : 0);
    return 48 + (this.values === null ? 0 : 48 + 8 * this.values.length);
  }

  /**
   * @internal Bytes of its data packed, no headers or slack: the bins' span at their width, or 8
   * per exact value (RequestAggregate.dataBytes).
   */
  dataBytes(): number {
    return this.binned !== null ? this.binned.spanBytes : 8 * sizeOf(this.values);
  }

  encode(): Uint8Array {
    return encodeWith((w) => this.encodeTo(w));
  }

  static decode(bytes: Uint8Array): DDSketch {
    return decodeWith(bytes, "DDSketch", (r) => DDSketch.decodeFrom(r));
  }

  /** @internal Writes into a shared writer (RequestAggregate embeds it). */
  encodeTo(w: ByteWriter): void {
    const alpha = this.mapping.relativeAccuracy;
    const b = this.binned;
    const collapsed = b !== null && b.floor > NO_KEY_LOW;
    const n = this.count;
    w.byte(VERSION);
    w.byte(TAG);
    w.byte(
      (n > 0 ? FLAG_NON_EMPTY : 0) |
        (alpha !== DEFAULT_RELATIVE_ACCURACY ? FLAG_CUSTOM_ACCURACY : 0) |
        (collapsed ? FLAG_COLLAPSED : 0) |
        (b === null ? FLAG_EXACT : 0),
    );
    if (alpha !== DEFAULT_RELATIVE_ACCURACY) w.float64(alpha);
    if (collapsed) w.zigzag(b.floor);
    if (n === 0) return;
    if (b === null) {
      writeExact(w, this.values as number[], n);
      return;
    }
    w.varint(b.zeroCount);
    w.float64(b.sum);
    w.float64(b.min);
    w.float64(b.max);
    encodeBins(b, w);
  }

  /**
   * @internal What encodeTo writes for a sketch of accuracy `alpha` holding exactly `values`
   * (sorted-values form, at most EXACT_LIMIT): RequestAggregate's small form encodes as this.
   */
  static encodeExactTo(w: ByteWriter, alpha: number, values: number[] | null): void {
    const n = sizeOf(values);
    const custom = alpha !== DEFAULT_RELATIVE_ACCURACY;
    w.byte(VERSION);
    w.byte(TAG);
    w.byte((n > 0 ? FLAG_NON_EMPTY : 0) | (custom ? FLAG_CUSTOM_ACCURACY : 0) | FLAG_EXACT);
    if (custom) w.float64(alpha);
    if (n > 0) writeExact(w, values as number[], n);
  }

  /** @internal A sketch holding exactly `values` (sorted-values form, at most EXACT_LIMIT; copied). */
  static ofExact(alpha: number, values: number[] | null): DDSketch {
    const s = new DDSketch({ relativeAccuracy: alpha });
    s.values = values === null ? null : values.slice();
    return s;
  }

  /** @internal The sorted values while exact (owned by the sketch: copy before changing), else null. */
  exactValues(): number[] | null {
    return this.binned === null ? this.values : null;
  }

  /** @internal */
  static decodeFrom(r: ByteReader): DDSketch {
    const latencies = DDSketch.readLatencies(r);
    if (latencies instanceof DDSketch) return latencies;
    const s = new DDSketch({ relativeAccuracy: decodedAccuracy });
    s.values = typeof latencies === "number" ? [latencies, NaN] : latencies;
    return s;
  }

  /** @internal The accuracy of the sketch readLatencies last decoded. */
  static get decodedAccuracy(): number {
    return decodedAccuracy;
  }

  /**
   * @internal decodeFrom without the sketch while exact (RequestAggregate's small form): null
   * for none, the value for a lone one, else the sorted-values array; the DDSketch once binned.
   * Its accuracy is then `decodedAccuracy`. Restoring a checkpoint decodes one per (slice, key):
   * no sketch object made only to be dropped.
   */
  static readLatencies(r: ByteReader): number | number[] | DDSketch | null {
    r.header(VERSION, TAG);
    const flags = r.byte();
    if (flags > 15 || (flags & FLAG_EXACT && flags & FLAG_COLLAPSED)) throw corrupt("DDSketch (unknown flags)");
    const alpha = flags & FLAG_CUSTOM_ACCURACY ? r.float64() : DEFAULT_RELATIVE_ACCURACY;
    if (!(alpha >= 1e-4 && alpha <= 0.5) || (flags & FLAG_CUSTOM_ACCURACY && alpha === DEFAULT_RELATIVE_ACCURACY)) {
      throw corrupt("DDSketch (relative accuracy out of range or not canonical)");
    }
    decodedAccuracy = alpha;
    if (flags & FLAG_EXACT) return flags & FLAG_NON_EMPTY ? readExact(r) : null;
    const s = new DDSketch({ relativeAccuracy: alpha });
    const b = (s.binned = new BinStore(s.mapping));
    const floor = flags & FLAG_COLLAPSED ? r.zigzag() : NO_KEY_LOW;
    if (flags & FLAG_NON_EMPTY) {
      b.zeroCount = r.varint();
      b.sum = r.float64();
      b.min = r.float64();
      b.max = r.float64();
      decodeBins(r, b);
      if (!consistent(b)) throw corrupt("DDSketch (inconsistent count, sum, min, max or bins)");
    }
    if (flags & FLAG_COLLAPSED && !(floor > -KEY_LIMIT && floor < KEY_LIMIT && floor <= b.minKey)) {
      throw corrupt("DDSketch (collapse floor out of range)");
    }
    b.floor = floor;
    return s;
  }

  /** Switches to the binned form (idempotent) and returns it. */
  private toBinned(): BinStore {
    if (this.binned !== null) return this.binned;
    const b = new BinStore(this.mapping);
    if (this.values !== null) b.addSorted(this.values, sizeOf(this.values));
    this.binned = b;
    this.values = null;
    return b;
  }

  private checkCompatible(other: DDSketch): void {
    if (other.mapping.relativeAccuracy !== this.mapping.relativeAccuracy) {
      throw new SketchError(
        "TM_SKETCH_MISMATCH",
        `cannot combine DDSketches of relativeAccuracy ${this.relativeAccuracy} and ${other.relativeAccuracy}; use one accuracy`,
      );
    }
  }
}

/** The accuracy of the sketch readLatencies last decoded (no object per decoded sketch). */
let decodedAccuracy = DEFAULT_RELATIVE_ACCURACY;

/** Exact values that follow (a count, then sorted doubles): a lone one as itself, else the sorted-values array. */
function readExact(r: ByteReader): number | number[] {
  const n = r.varint();
  if (n < 1 || n > EXACT_LIMIT) throw corrupt("DDSketch (exact value count out of range)");
  if (n === 1) return exactValue(r.float64(), 0);
  // Sorted already: the array insertSorted would have grown to, filled in order (no copies).
  const values = sortedOfSize(n);
  let prev = 0;
  for (let i = 0; i < n; i++) prev = values[i] = exactValue(r.float64(), prev);
  return values;
}

/** An exact value read after `prev`: checked sorted, non-negative, finite and not −0. */
function exactValue(v: number, prev: number): number {
  if (!(v >= prev && v < Infinity) || Object.is(v, -0))
    throw corrupt("DDSketch (exact values not sorted, negative or not finite)");
  return v;
}

function writeExact(w: ByteWriter, values: number[], n: number): void {
  w.varint(n);
  for (let i = 0; i < n; i++) w.float64(values[i] as number);
}

/** What a decoded binned sketch must satisfy to be one that add/merge/subtract could produce. */
function consistent(b: BinStore): boolean {
  return (
    b.count > 0 &&
    Number.isSafeInteger(b.count) &&
    b.sum >= 0 &&
    b.sum < Infinity &&
    b.min >= 0 &&
    b.min <= b.max &&
    b.max < Infinity &&
    !Object.is(b.min, -0) &&
    !Object.is(b.max, -0) &&
    b.zeroCount > 0 === (b.min === 0) &&
    (b.total === 0) === (b.max === 0)
  );
}
