import { BinStore } from "./bin-store.js";
import { ByteReader } from "./byte-reader.js";
import { ByteWriter } from "./byte-writer.js";
import { SketchError, corrupt, invalidCount, invalidOption, invalidValue } from "./errors.js";
import { LogMapping } from "./log-mapping.js";

export interface DDSketchOptions {
  /** Relative accuracy α of every quantile, in [0.0001, 0.5]; default 0.01. */
  relativeAccuracy?: number;
}

export const DEFAULT_RELATIVE_ACCURACY = 0.01;
/** Beyond this many bins the lowest collapse (issue 3). */
export const MAX_BINS = 2048;
const VERSION = 1;
const TAG = 0x44; // "D"
const FLAG_NON_EMPTY = 1;
const FLAG_CUSTOM_ACCURACY = 2;
const FLAG_COLLAPSED = 4;

/**
 * DDSketch (Masson, Rim, Lee, VLDB 2019): quantiles within relative accuracy α, mergeable.
 * Values must be ≥ 0 (latencies): negative or non-finite values throw, zero goes to a zero count.
 * count, sum, min and max are exact beside the bins (min/max become bin-accurate after a
 * subtract/remove takes the extreme value out).
 */
export class DDSketch {
  private readonly mapping: LogMapping;
  private readonly store = new BinStore(MAX_BINS);
  private zeroCount = 0;
  private _sum = 0;
  private _min = Infinity;
  private _max = -Infinity;

  constructor(options: DDSketchOptions = {}) {
    this.mapping = LogMapping.of(options.relativeAccuracy ?? DEFAULT_RELATIVE_ACCURACY);
  }

  get relativeAccuracy(): number {
    return this.mapping.relativeAccuracy;
  }
  get count(): number {
    return this.zeroCount + this.store.total;
  }
  get sum(): number {
    return this._sum;
  }
  /** Smallest value added; NaN when empty. */
  get min(): number {
    return this.count === 0 ? NaN : this._min;
  }
  /** Largest value added; NaN when empty. */
  get max(): number {
    return this.count === 0 ? NaN : this._max;
  }

  add(value: number, count = 1): void {
    if (count !== 1 && !(Number.isSafeInteger(count) && count > 0)) throw invalidCount(count);
    if (value > 0 && value < Infinity) {
      this.store.add(Math.ceil(Math.log(value) * this.mapping.multiplier), count);
    } else if (value === 0) {
      this.zeroCount += count;
    } else {
      throw invalidValue("value", value);
    }
    this._sum += value * count;
    if (value < this._min) this._min = value;
    if (value > this._max) this._max = value;
  }

  /** Removes `count` copies of a value added before (session windows); throws TM_SKETCH_NOT_SUBSET if absent. */
  remove(value: number, count = 1): void {
    if (!(Number.isSafeInteger(count) && count > 0)) throw invalidCount(count);
    if (!(value >= 0 && value < Infinity)) throw invalidValue("value", value);
    if (value === 0) {
      if (this.zeroCount < count) throw notSubset(`zero count ${this.zeroCount} < ${count}`);
      this.zeroCount -= count;
    } else {
      this.store.remove(this.mapping.key(value), count);
    }
    this._sum -= value * count;
    this.afterRemoval(value, value);
  }

  /** Value at quantile q ∈ [0, 1] (lower rank q·(count−1)); NaN when empty. */
  quantile(q: number): number {
    if (!(q >= 0 && q <= 1)) throw invalidOption("q", q, "a number in [0, 1]");
    const n = this.count;
    if (n === 0) return NaN;
    if (q === 0) return this._min;
    if (q === 1) return this._max;
    const rank = q * (n - 1);
    if (rank < this.zeroCount) return 0;
    const v = this.mapping.value(this.store.keyAtRank(rank - this.zeroCount));
    return v < this._min ? this._min : v > this._max ? this._max : v;
  }

  merge(other: DDSketch): void {
    this.checkCompatible(other);
    if (other.count === 0) return;
    this.store.merge(other.store);
    this.zeroCount += other.zeroCount;
    this._sum += other._sum;
    if (other._min < this._min) this._min = other._min;
    if (other._max > this._max) this._max = other._max;
  }

  /** Removes a sketch whose values were all added to (or merged into) this one. Atomic. */
  subtract(prefix: DDSketch): void {
    this.checkCompatible(prefix);
    if (prefix.count === 0) return;
    if (prefix.zeroCount > this.zeroCount) throw notSubset(`zero count ${this.zeroCount} < ${prefix.zeroCount}`);
    this.store.subtract(prefix.store);
    this.zeroCount -= prefix.zeroCount;
    this._sum -= prefix._sum;
    this.afterRemoval(prefix._min, prefix._max);
  }

  /** Non-empty bins as [key, count] pairs in key order (zeros not included): for tests and debugging. */
  bins(): [key: number, count: number][] {
    return this.store.bins();
  }

  clone(): DDSketch {
    const c = new DDSketch({ relativeAccuracy: this.mapping.relativeAccuracy });
    c.store.copyFrom(this.store);
    c.zeroCount = this.zeroCount;
    c._sum = this._sum;
    c._min = this._min;
    c._max = this._max;
    return c;
  }

  /** Approximate heap footprint in bytes (object, bin array). */
  heapBytes(): number {
    const typedArray = this.store.capacityBytes > 0 ? 200 + this.store.capacityBytes : 0;
    return 200 + typedArray;
  }

  encode(): Uint8Array {
    const w = new ByteWriter(32);
    this.encodeTo(w);
    return w.finish();
  }

  static decode(bytes: Uint8Array): DDSketch {
    const r = new ByteReader(bytes, "DDSketch");
    const s = DDSketch.decodeFrom(r);
    r.end();
    return s;
  }

  /** @internal Writes into a shared writer (RequestAggregate embeds it). */
  encodeTo(w: ByteWriter): void {
    const alpha = this.mapping.relativeAccuracy;
    const collapsed = this.store.floor > -Infinity;
    const nonEmpty = this.count > 0;
    w.byte(VERSION);
    w.byte(TAG);
    w.byte((nonEmpty ? FLAG_NON_EMPTY : 0) | (alpha !== DEFAULT_RELATIVE_ACCURACY ? FLAG_CUSTOM_ACCURACY : 0) | (collapsed ? FLAG_COLLAPSED : 0));
    if (alpha !== DEFAULT_RELATIVE_ACCURACY) w.float64(alpha);
    if (collapsed) w.zigzag(this.store.floor);
    if (!nonEmpty) return;
    w.varint(this.zeroCount);
    w.float64(this._sum);
    w.float64(this._min);
    w.float64(this._max);
    this.store.encode(w);
  }

  /** @internal */
  static decodeFrom(r: ByteReader): DDSketch {
    r.header(VERSION, TAG);
    const flags = r.byte();
    if (flags > 7) throw corrupt("DDSketch (unknown flags)");
    const alpha = flags & FLAG_CUSTOM_ACCURACY ? r.float64() : DEFAULT_RELATIVE_ACCURACY;
    if (!(alpha >= 1e-4 && alpha <= 0.5) || (flags & FLAG_CUSTOM_ACCURACY && alpha === DEFAULT_RELATIVE_ACCURACY)) {
      throw corrupt("DDSketch (relative accuracy out of range or not canonical)");
    }
    const s = new DDSketch({ relativeAccuracy: alpha });
    const floor = flags & FLAG_COLLAPSED ? r.zigzag() : -Infinity;
    if (!(flags & FLAG_NON_EMPTY)) {
      s.store.floor = floor;
      return s;
    }
    s.zeroCount = r.varint();
    s._sum = r.float64();
    s._min = r.float64();
    s._max = r.float64();
    s.store.decode(r);
    s.store.floor = floor;
    s.validate();
    return s;
  }

  private validate(): void {
    const { store } = this;
    const ok =
      this.count > 0 &&
      Number.isSafeInteger(this.count) &&
      this._sum >= 0 &&
      this._sum < Infinity &&
      this._min >= 0 &&
      this._min <= this._max &&
      this._max < Infinity &&
      (this.zeroCount > 0) === (this._min === 0) &&
      (store.total === 0) === (this._max === 0) &&
      !(store.floor > store.minKey);
    if (!ok) throw corrupt("DDSketch (inconsistent count, sum, min, max or bins)");
  }

  private checkCompatible(other: DDSketch): void {
    if (other.mapping.relativeAccuracy !== this.mapping.relativeAccuracy) {
      throw new SketchError(
        "TM_SKETCH_MISMATCH",
        `cannot combine DDSketches of relativeAccuracy ${this.relativeAccuracy} and ${other.relativeAccuracy}; use one accuracy`,
      );
    }
  }

  /** After taking out values in [lo, hi]: keep exact extremes we still know, else bin-accurate ones. */
  private afterRemoval(lo: number, hi: number): void {
    if (this.count === 0) {
      this._sum = 0;
      this._min = Infinity;
      this._max = -Infinity;
      return;
    }
    if (this._sum < 0) this._sum = 0;
    const minGone = lo <= this._min;
    const maxGone = hi >= this._max;
    if (minGone) this._min = this.zeroCount > 0 ? 0 : Math.max(this._min, this.mapping.value(this.store.minKey));
    if (maxGone) this._max = this.store.total === 0 ? 0 : Math.min(this._max, this.mapping.value(this.store.maxKey));
    // Two bin-accurate stand-ins of one bin may cross the exact other extreme: keep the exact one.
    if (this._min > this._max) {
      if (minGone) this._min = this._max;
      else this._max = this._min;
    }
  }
}

function notSubset(detail: string): SketchError {
  return new SketchError("TM_SKETCH_NOT_SUBSET", `cannot remove values this DDSketch does not hold (${detail}); remove only what was added`);
}
