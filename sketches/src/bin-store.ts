import { ByteReader } from "./byte-reader.js";
import { ByteWriter } from "./byte-writer.js";
import { SketchError, corrupt } from "./errors.js";

const EMPTY = new Float64Array(0);
/** Keys of positive doubles at α ≥ 1e-4 stay well inside ±2^31. */
const KEY_LIMIT = 2 ** 31;

/**
 * Dense counts of consecutive keys in a Float64Array, at most `maxBins` wide. When a new key would
 * widen it past that, the lowest bins collapse into one (`floor`): low quantiles lose accuracy,
 * high ones (the ones latency users read) keep it.
 */
export class BinStore {
  private counts: Float64Array = EMPTY;
  /** Key of counts[0]. */
  private offset = 0;
  /** Smallest and largest key with a non-zero count; +∞/−∞ when empty. */
  minKey = Infinity;
  maxKey = -Infinity;
  total = 0;
  /** Keys below this were collapsed into it; −∞ until the first collapse. */
  floor = -Infinity;

  constructor(readonly maxBins: number) {}

  add(key: number, n: number): void {
    if (key < this.floor) key = this.floor;
    let i = key - this.offset;
    if (i < 0 || i >= this.counts.length) {
      key = this.grow(key);
      i = key - this.offset;
    }
    this.counts[i] = (this.counts[i] as number) + n;
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

  /** Removes n from a key; throws TM_SKETCH_NOT_SUBSET (and changes nothing) if it holds less. */
  remove(key: number, n: number): void {
    if (key < this.floor) key = this.floor;
    const have = this.countAt(key);
    if (have < n) {
      throw new SketchError("TM_SKETCH_NOT_SUBSET", `cannot remove ${n} from bin ${key} holding ${have}; remove only what was added`);
    }
    this.counts[key - this.offset] = have - n;
    this.total -= n;
    if (have === n && (key === this.minKey || key === this.maxKey)) this.rescan();
  }

  merge(other: BinStore): void {
    for (let k = other.minKey; k <= other.maxKey; k++) {
      const c = other.counts[k - other.offset] as number;
      if (c !== 0) this.add(k, c);
    }
  }

  /** Removes every bin of `other`; checks all bins first so a failure changes nothing. */
  subtract(other: BinStore): void {
    let folded = 0;
    for (let k = other.minKey; k <= other.maxKey; k++) {
      const c = other.counts[k - other.offset] as number;
      if (c === 0) continue;
      if (k <= this.floor) folded += c;
      else if (this.countAt(k) < c) throw notSubset(k);
    }
    if (folded > 0 && this.countAt(this.floor) < folded) throw notSubset(this.floor);
    for (let k = other.minKey; k <= other.maxKey; k++) {
      const c = other.counts[k - other.offset] as number;
      if (c !== 0) this.remove(k, c);
    }
  }

  /** The key holding the element of 0-based rank `rank` (cumulative count > rank). */
  keyAtRank(rank: number): number {
    let cum = 0;
    for (let k = this.minKey; k <= this.maxKey; k++) {
      cum += this.counts[k - this.offset] as number;
      if (cum > rank) return k;
    }
    return this.maxKey;
  }

  bins(): [number, number][] {
    const out: [number, number][] = [];
    for (let k = this.minKey; k <= this.maxKey; k++) {
      const c = this.counts[k - this.offset] as number;
      if (c !== 0) out.push([k, c]);
    }
    return out;
  }

  copyFrom(src: BinStore): void {
    this.counts = src.total === 0 ? EMPTY : src.counts.slice();
    this.offset = src.offset;
    this.minKey = src.minKey;
    this.maxKey = src.maxKey;
    this.total = src.total;
    this.floor = src.floor;
  }

  /** Allocated bytes of the counts array (for heap estimates). */
  get capacityBytes(): number {
    return this.counts.byteLength;
  }

  /**
   * Runs of consecutive non-zero bins: count of runs, then per run the gap from the previous run
   * (the first run: its zigzag start key), its length and its counts, all varints.
   */
  encode(w: ByteWriter): void {
    const runs: number[] = [];
    for (let k = this.minKey; k <= this.maxKey; k++) {
      if (this.counts[k - this.offset] === 0) continue;
      const start = k;
      while (k < this.maxKey && this.counts[k + 1 - this.offset] !== 0) k++;
      runs.push(start, k);
    }
    w.varint(runs.length / 2);
    for (let r = 0; r < runs.length; r += 2) {
      const start = runs[r] as number;
      const end = runs[r + 1] as number;
      if (r === 0) w.zigzag(start);
      else w.varint(start - (runs[r - 1] as number) - 2);
      w.varint(end - start);
      for (let k = start; k <= end; k++) w.varint(this.counts[k - this.offset] as number);
    }
  }

  decode(r: ByteReader): void {
    const runCount = r.varint();
    let prevEnd = 0;
    for (let i = 0; i < runCount; i++) {
      const start = i === 0 ? r.zigzag() : prevEnd + 2 + r.varint();
      const end = start + r.varint();
      if (start < -KEY_LIMIT || end > KEY_LIMIT || end - (i === 0 ? start : this.minKey) >= this.maxBins) {
        throw corrupt("DDSketch bins (key out of range)");
      }
      for (let k = start; k <= end; k++) {
        const c = r.varint();
        if (c === 0) throw corrupt("DDSketch bins (zero count in a run)");
        this.add(k, c);
      }
      prevEnd = end;
    }
  }

  private grow(key: number): number {
    const lo = Math.min(this.minKey, key);
    const hi = Math.max(this.maxKey, key);
    if (hi - lo + 1 > this.maxBins) {
      this.raiseFloor(hi - this.maxBins + 1);
      if (key < this.floor) key = this.floor;
    }
    const newLo = Math.max(lo, this.floor);
    const span = hi - newLo + 1;
    const len = Math.min(this.maxBins, Math.max(span + 16, this.counts.length * 2));
    // Room on the side that grew: below when extending down, above otherwise; centred when empty.
    const offset = this.total === 0 ? key - (len >> 1) : key <= this.minKey ? hi - len + 1 : newLo;
    this.reallocate(offset, len);
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
    if (folded > 0) {
      if (floor - this.offset >= this.counts.length) this.reallocate(floor, Math.min(this.maxBins, Math.max(16, this.maxKey - floor + 1)));
      this.counts[floor - this.offset] = (this.counts[floor - this.offset] as number) + folded;
      this.minKey = floor;
      if (this.maxKey < floor) this.maxKey = floor;
    }
  }

  private reallocate(offset: number, len: number): void {
    const next = new Float64Array(len);
    if (this.total > 0) {
      for (let k = Math.max(this.minKey, offset); k <= this.maxKey && k < offset + len; k++) {
        next[k - offset] = this.counts[k - this.offset] as number;
      }
    }
    this.counts = next;
    this.offset = offset;
  }

  private rescan(): void {
    if (this.total === 0) {
      this.minKey = Infinity;
      this.maxKey = -Infinity;
      return;
    }
    while (this.counts[this.minKey - this.offset] === 0) this.minKey++;
    while (this.counts[this.maxKey - this.offset] === 0) this.maxKey--;
  }
}

function notSubset(key: number): SketchError {
  return new SketchError("TM_SKETCH_NOT_SUBSET", `bin ${key} holds fewer values than the sketch to subtract; subtract only a sketch merged in before`);
}
