import { decodeWith, type ByteReader } from "./byte-reader.js";
import { encodeWith, type ByteWriter } from "./byte-writer.js";
import { SketchError, corrupt, invalidOption } from "./errors.js";
import {
  denseCopy,
  denseDataBytes,
  denseEmpty,
  denseHeapBytes,
  denseHistogram,
  denseOfPacked,
  denseRaise,
  denseRaiseAll,
  writePacked,
  type DenseRegisters,
} from "./dense-registers.js";
import { ertlEstimate } from "./hll-estimator.js";
import type { RequestInput } from "./request-input.js";
import { HASH_LO_SCALE, hash53 } from "./hll-hash.js";
import {
  LIST_MAX,
  RANK_BITS,
  sparseEntries,
  sparseFill,
  sparseInsert,
  sparseSize,
  sparseTableFor,
  type SparseSet,
} from "./sparse-set.js";

export interface HyperLogLogOptions {
  /** Precision p ∈ [4, 18]: 2^p registers, standard error 1.04/√2^p. Default 14. */
  precision?: number;
}

export const DEFAULT_PRECISION = 14;
/** Sparse entries index the hash's top 25 bits (HLL++'s p'): exact-ish below ~2^p/8 distinct. */
const SPARSE_P = 25;
const VERSION = 1;
const TAG = 0x48; // "H"
const MODE_SPARSE = 0;
const MODE_DENSE = 1;

/**
 * HyperLogLog over 53-bit hashes: a sparse open-addressed set of (25-bit index, rank) entries
 * while small, dense registers (4 bits each, those past 15 in an overflow) in one Uint8Array once the set would outgrow them; Ertl's improved
 * estimator for dense (from a register histogram kept up to date, see dense-registers.ts), linear
 * counting on 2^25 buckets for sparse.
 */
/** The sparse entry of a hash: its top 25 bits (the index) · 32 + the rank of the rest. */
export function sparseEntryOf(hash: number): number {
  const hi = (hash / HASH_LO_SCALE) >>> 0;
  const lo = hash - hi * HASH_LO_SCALE;
  const w = hi << SPARSE_P;
  const rank = w !== 0 ? Math.clz32(w) + 1 : 32 - SPARSE_P + (lo === 0 ? 22 : Math.clz32(lo) - 10);
  return (hi >>> (32 - SPARSE_P)) * 32 + rank;
}

export class HyperLogLog {
  readonly precision: number;
  /** Empty (null), sparse (a list or table, see sparse-set.ts) or dense (registers + histogram in a Uint8Array): one field. */
  private state: SparseSet | DenseRegisters | null = null;

  constructor(options: HyperLogLogOptions = {}) {
    const p = options.precision ?? DEFAULT_PRECISION;
    if (!(Number.isInteger(p) && p >= 4 && p <= 18))
      throw invalidOption("precision", p, "an integer in [4, 18] (default 14)");
    this.precision = p;
  }

  /** The hash `add` uses: a 53-bit non-negative integer. Hash a user once, add it to many sketches. */
  static hash(value: string): number {
    return hash53(value);
  }

  add(value: string): void {
    this.addHash(hash53(value));
  }

  addHash(hash: number): void {
    const dense = this.registers;
    if (dense !== null) {
      const hi = (hash / HASH_LO_SCALE) >>> 0;
      const lo = hash - hi * HASH_LO_SCALE;
      const p = this.precision;
      const w = hi << p;
      const rank = w !== 0 ? Math.clz32(w) + 1 : 32 - p + (lo === 0 ? 22 : Math.clz32(lo) - 10);
      this.state = denseRaise(dense, p, hi >>> (32 - p), rank);
      return;
    }
    this.insertEntry(sparseEntryOf(hash));
  }

  /** addHash(input.hash) with the hash's halves and sparse entry derived once (request-input.ts). */
  addInput(input: RequestInput): void {
    const s = this.state;
    if (!(s instanceof Uint8Array)) return this.insertEntry(input.entry);
    const hi = input.hashHi;
    const lo = input.hashLo;
    const p = this.precision;
    const w = hi << p;
    const rank = w !== 0 ? Math.clz32(w) + 1 : 32 - p + (lo === 0 ? 22 : Math.clz32(lo) - 10);
    this.state = denseRaise(s, p, hi >>> (32 - p), rank);
  }

  /** @internal Adds a sparse entry (sparseEntryOf of a hash), as addHash would. */
  addSparseEntry(e: number): void {
    this.insertEntry(e);
  }

  /** @internal The sparse list while the sketch is one (≤ LIST_MAX slots; owned: copy before changing), else null. */
  sparseList(): number[] | null {
    const s = this.state;
    return Array.isArray(s) ? s : null;
  }

  /** @internal How many sparse entries a sketch of precision p holds before it turns dense. */
  static sparseLimit(precision: number): number {
    return Math.max(12, ((1 << precision) >>> 3) * 0.75);
  }

  /** @internal The estimate of a sparse sketch holding `entries` entries (linear counting on 2^25 buckets). */
  static sparseEstimate(entries: number): number {
    const m = 2 ** SPARSE_P;
    return -m * Math.log1p(-entries / m);
  }

  /**
   * @internal What encodeTo writes for a sparse sketch of precision p holding the entries of
   * `list` (a sparse-set list): RequestAggregate's small form encodes as this.
   */
  static encodeListTo(w: ByteWriter, precision: number, list: number[] | null): void {
    w.byte(VERSION);
    w.byte(TAG);
    w.byte(precision);
    w.byte(MODE_SPARSE);
    encodeSparse(w, list);
  }

  estimate(): number {
    if (this.registers === null) return HyperLogLog.sparseEstimate(sparseSize(this.table));
    const p = this.precision;
    return ertlEstimate(denseHistogram(this.registers, p), 1 << p, 53 - p);
  }

  merge(other: HyperLogLog): void {
    if (other.precision !== this.precision) {
      throw new SketchError(
        "TM_SKETCH_MISMATCH",
        `cannot merge HyperLogLogs of precision ${this.precision} and ${other.precision}; use one precision`,
      );
    }
    if (other.registers !== null) {
      this.state = denseRaiseAll(this.densify(), this.precision, other.registers);
      return;
    }
    for (const e of sparseEntries(other.table)) this.insertEntry(e);
  }

  clone(): HyperLogLog {
    const c = new HyperLogLog({ precision: this.precision });
    const s = this.state;
    c.state = s === null ? null : s instanceof Uint8Array ? denseCopy(s) : s.slice();
    return c;
  }

  private get registers(): DenseRegisters | null {
    const s = this.state;
    return s instanceof Uint8Array ? s : null;
  }

  private get table(): SparseSet | null {
    const s = this.state;
    return s instanceof Uint8Array ? null : s;
  }

  /** True while the sketch holds its sparse form. */
  get isSparse(): boolean {
    return this.registers === null;
  }

  /** Approximate heap footprint in bytes. */
  heapBytes(): number {
    const s = this.state;
    if (s === null) return 40;
    if (s instanceof Uint8Array) return 40 + denseHeapBytes(s);
    return Array.isArray(s) ? 40 + 48 + 8 * s.length : 40 + 200 + 4 * s.length;
  }

  /** @internal Bytes of its data packed, no headers or slack: the dense registers (denseDataBytes), or 4 per sparse entry. */
  dataBytes(): number {
    const s = this.state;
    if (s === null) return 0;
    return s instanceof Uint8Array ? denseDataBytes(s, this.precision) : 4 * sparseSize(s);
  }

  encode(): Uint8Array {
    return encodeWith((w) => this.encodeTo(w));
  }

  static decode(bytes: Uint8Array): HyperLogLog {
    return decodeWith(bytes, "HyperLogLog", (r) => HyperLogLog.decodeFrom(r));
  }

  /** @internal Sparse: sorted entries, delta varints. Dense: registers packed 6 bits each. */
  encodeTo(w: ByteWriter): void {
    w.byte(VERSION);
    w.byte(TAG);
    w.byte(this.precision);
    if (this.registers === null) {
      w.byte(MODE_SPARSE);
      encodeSparse(w, this.table);
      return;
    }
    w.byte(MODE_DENSE);
    const p = this.precision;
    const at = w.block(3 << (p - 2));
    writePacked(this.registers, p, w.target, at);
  }

  /** @internal */
  static decodeFrom(r: ByteReader): HyperLogLog {
    const users = HyperLogLog.readUsers(r, false);
    if (users instanceof HyperLogLog) return users;
    const h = new HyperLogLog({ precision: decodedPrecision });
    h.state = users === null ? null : typeof users === "number" ? [users, 0] : users;
    return h;
  }

  /**
   * @internal decodeFrom, or with `small` without the sketch while it holds at most
   * listLimit(p) entries (RequestAggregate's small form): null for none, the entry for a lone
   * one, else the sparse-set list; the HyperLogLog past that. Its precision is then
   * `decodedPrecision`. Restoring a checkpoint decodes one per (slice, key): no sketch object
   * made only to be dropped.
   */
  static readUsers(r: ByteReader, small: boolean): number | number[] | HyperLogLog | null {
    r.header(VERSION, TAG);
    const p = r.byte();
    if (p < 4 || p > 18) throw corrupt("HyperLogLog (precision out of range)");
    decodedPrecision = p;
    const mode = r.byte();
    if (mode === MODE_SPARSE) {
      const n = r.varint();
      if (n > HyperLogLog.sparseLimit(p)) throw corrupt("HyperLogLog (too many sparse entries)");
      if (n <= (small ? HyperLogLog.listLimit(p) : 0))
        return n === 1 ? readEntry(r, 0, 0) : (readSparse(r, n) as number[] | null);
      const h = new HyperLogLog({ precision: p });
      h.state = readSparse(r, n);
      return h;
    }
    if (mode !== MODE_DENSE) throw corrupt("HyperLogLog (unknown mode)");
    const h = new HyperLogLog({ precision: p });
    h.decodeDense(r);
    return h;
  }

  /** @internal The precision of the sketch readUsers last decoded. */
  static get decodedPrecision(): number {
    return decodedPrecision;
  }

  /** @internal How many sparse entries RequestAggregate's small form holds at precision p (a sparse-set list, within the sparse limit). */
  static listLimit(precision: number): number {
    return Math.min(LIST_MAX, HyperLogLog.sparseLimit(precision));
  }

  private decodeDense(r: ByteReader): void {
    const p = this.precision;
    const dense = denseOfPacked(r.bytes(3 << (p - 2)), p, 54 - p);
    if (dense === null) throw corrupt("HyperLogLog (register out of range)");
    this.state = dense;
  }

  /** Sparse capacity limit: beyond it the table would outweigh 2^p one-byte registers. */
  private maxSparse(): number {
    return HyperLogLog.sparseLimit(this.precision);
  }

  private insertEntry(e: number): void {
    if (this.registers === null) {
      const set = sparseInsert(this.table, e, this.maxSparse());
      if (set !== null) {
        this.state = set;
        return;
      }
      this.densify();
    }
    const [idx, rank] = this.denseOf(e);
    this.state = denseRaise(this.registers as DenseRegisters, this.precision, idx, rank);
  }

  private densify(): DenseRegisters {
    if (this.registers !== null) return this.registers;
    let dense = denseEmpty(this.precision);
    for (const e of sparseEntries(this.table)) {
      const [idx, rank] = this.denseOf(e);
      dense = denseRaise(dense, this.precision, idx, rank);
    }
    this.state = dense;
    return dense;
  }

  /** Register index and rank at precision p of a sparse entry (exact: p' > p). */
  private denseOf(e: number): [number, number] {
    const key = e >>> RANK_BITS;
    const extra = SPARSE_P - this.precision;
    const mid = key & ((1 << extra) - 1);
    const rank = mid !== 0 ? Math.clz32(mid) - (32 - extra) + 1 : extra + (e & 31);
    return [key >>> extra, rank];
  }
}

/**
 * Entries in ascending order as delta varints. A list (≤ LIST_MAX entries, the common case in a
 * checkpoint: most keys see few users) is walked in order by picking the next larger entry each
 * time, allocating nothing; a table is copied into a typed array, which sorts without a comparator.
 */
function encodeSparse(w: ByteWriter, set: SparseSet | null): void {
  const n = sparseSize(set);
  w.varint(n);
  if (set === null) return;
  let prev = 0;
  if (Array.isArray(set)) {
    for (let k = 0; k < n; k++) {
      let next = Infinity;
      for (let i = 0; i < n; i++) {
        const e = set[i] as number;
        if (e > prev && e < next) next = e;
      }
      w.varint(next - prev);
      prev = next;
    }
    return;
  }
  const sorted = new Uint32Array(n);
  for (let i = 1, j = 0; i < set.length; i++) if (set[i] !== 0) sorted[j++] = set[i] as number;
  sorted.sort();
  for (let i = 0; i < n; i++) {
    const e = sorted[i] as number;
    w.varint(e - prev);
    prev = e;
  }
}

/** The module's last decoded precision (HyperLogLog.readUsers: no object per decoded sketch). */
let decodedPrecision = 0;

/** The `n` sparse entries that follow (delta varints, ascending): as inserts would have built them. */
function readSparse(r: ByteReader, n: number): SparseSet | null {
  // A short list is built as inserting the entries would build it (strictly ascending indexes:
  // no duplicates; 2 slots more each time it fills, 0 for an idle slot), without the inserts'
  // copies: restoring a checkpoint decodes one per (slice, key).
  const list = n > 0 && n <= LIST_MAX ? new Array<number>(Math.max(2, n + (n % 2))).fill(0) : null;
  // A longer one straight into the table the inserts would have grown to (no rehash on the way).
  const table = n > LIST_MAX ? sparseTableFor(n) : null;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const e = readEntry(r, prev, i);
    if (list !== null) list[i] = e;
    else if (table !== null) sparseFill(table, e);
    prev = e;
  }
  return list ?? table;
}

/** The i-th sparse entry, after `prev`: checked for order and range. */
function readEntry(r: ByteReader, prev: number, i: number): number {
  const e = prev + r.varint();
  // Range first: below 2^30 the index and rank checks are 32-bit integer operations.
  if (e >= ENTRY_END) throw sparseCorrupt();
  const rank = e & 31;
  if ((i > 0 && e >>> RANK_BITS <= prev >>> RANK_BITS) || rank < 1 || rank > 53 - SPARSE_P + 1) throw sparseCorrupt();
  return e;
}

/** Sparse entries are below 2^(25 + 5). */
const ENTRY_END = 2 ** (SPARSE_P + RANK_BITS);

function sparseCorrupt(): SketchError {
  return corrupt("HyperLogLog (sparse entries out of order or out of range)");
}
