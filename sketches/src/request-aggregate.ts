import { decodeReusing, type ByteReader } from "./byte-reader.js";
import { encodeWith, lendWriter, returnWriter, type ByteWriter } from "./byte-writer.js";
import { DDSketch, DEFAULT_RELATIVE_ACCURACY, EXACT_LIMIT } from "./ddsketch.js";
import { SketchError, corrupt, invalidValue } from "./errors.js";
import { DEFAULT_PRECISION, HyperLogLog, sparseEntryOf } from "./hyperloglog.js";
import { containsAll, insertSorted, removeSorted, sizeOf } from "./sorted-values.js";
import { sparseInsert, sparseSize } from "./sparse-set.js";
import { notSubset } from "./bin-store.js";
import type { RequestInput } from "./request-input.js";

export interface RequestAggregateOptions {
  /** DDSketch relative accuracy (default 0.01). */
  relativeAccuracy?: number;
  /** HyperLogLog precision (default 14). */
  hllPrecision?: number;
}

const VERSION = 1;
const TAG = 0x41; // "A"

/** The options, checked, as one shared object per (accuracy, precision): an aggregate holds a reference. */
interface Spec extends Required<RequestAggregateOptions> {
  /** Sparse entries the small form holds: a sparse-set list (≤ 16) within the HyperLogLog's sparse limit. */
  readonly entryLimit: number;
}
const specs = new Map<string, Spec>();
/** Frozen options objects seen (and specs themselves) → their spec: an engine passes one object for every key. */
const seen = new WeakMap<object, Spec>();

/** The options object specOf was last given and its spec: an engine makes every aggregate with one (no WeakMap lookup then). */
let lastOptions: object | null = null;
let lastOptionsSpec: Spec | null = null;

function specOf(options: RequestAggregateOptions): Spec {
  if (options === lastOptions) return lastOptionsSpec as Spec;
  const spec = lookupSpec(options);
  // Only a frozen options object can be remembered: another could change under the cache.
  if (Object.isFrozen(options)) {
    lastOptions = options;
    lastOptionsSpec = spec;
  }
  return spec;
}

function lookupSpec(options: RequestAggregateOptions): Spec {
  const cached = seen.get(options);
  if (cached !== undefined) return cached;
  const relativeAccuracy = options.relativeAccuracy ?? DEFAULT_RELATIVE_ACCURACY;
  const hllPrecision = options.hllPrecision ?? DEFAULT_PRECISION;
  const id = `${relativeAccuracy}/${hllPrecision}`;
  let spec = specs.get(id);
  if (spec === undefined) {
    // Throws, as the sketches do, on a bad accuracy or precision.
    new DDSketch({ relativeAccuracy });
    const entryLimit = HyperLogLog.listLimit(new HyperLogLog({ precision: hllPrecision }).precision);
    spec = Object.freeze({ relativeAccuracy, hllPrecision, entryLimit });
    seen.set(spec, spec);
    // Bounded: decoding arbitrary options must not grow it without limit.
    if (specs.size < 64) specs.set(id, spec);
  }
  // Only a frozen options object can be remembered: another could change under the cache.
  if (Object.isFrozen(options)) seen.set(options, spec);
  return spec;
}

/** The spec last decoded: a checkpoint's aggregates share a few (no options object or lookup per key). */
let lastSpec: Spec | null = null;

function specFor(relativeAccuracy: number, hllPrecision: number): Spec {
  const last = lastSpec;
  if (last !== null && last.relativeAccuracy === relativeAccuracy && last.hllPrecision === hllPrecision) return last;
  return (lastSpec = specOf({ relativeAccuracy, hllPrecision }));
}

/** Scratch arrays of readValues / readEntries: a snapshot encodes every aggregate, a pane reads quantiles. */
const LONE_VALUE: number[] = [NaN, NaN];
const LONE_ENTRY: number[] = [0, 0];

/**
 * What the engine keeps per (window, key): request count, error count, latency quantiles
 * (DDSketch) and distinct users (HyperLogLog). `count` is the latency count (one per request).
 *
 * Small form (docs/decisions/0015-light-state.md): while it holds at most EXACT_LIMIT latencies
 * they sit in one sorted array inline (the DDSketch's own exact form: quantiles exact), and while
 * at most 16 users' sparse entries, those sit in one list inline (the HyperLogLog's own sparse
 * list: the same estimate); the DDSketch and the HyperLogLog objects are built only past that.
 * Values and bytes are those of the sketches it stands for, in either form.
 */
export class RequestAggregate {
  private readonly spec: Spec;

  private _errors = 0;
  /**
   * The latencies, in one field (docs/decisions/0025-light-sketches.md): null (none), a lone
   * latency as a number, a few in the sorted-values form (through `values`, the array made again
   * for a lone one when read), or the DDSketch (through `sketch`) past EXACT_LIMIT. A key with one
   * event holds no array (docs/decisions/0019-core-light.md).
   */
  private lat: number | number[] | DDSketch | null = null;
  /** The users, alike: null, a lone sparse entry (a number, never 0), the sparse-set list (`entries`) or the HyperLogLog (`hll`). */
  private usr: number | number[] | HyperLogLog | null = null;

  constructor(options: RequestAggregateOptions = {}) {
    this.spec = specOf(options);
  }

  get count(): number {
    const l = this.lat;
    if (l === null) return 0;
    if (typeof l === "number") return 1;
    return Array.isArray(l) ? sizeOf(l) : l.count;
  }

  /** The DDSketch once the latencies outgrew the small form, else null. */
  private get sketch(): DDSketch | null {
    const l = this.lat;
    return l instanceof DDSketch ? l : null;
  }

  /** Sets the DDSketch; null leaves a small form as it is. */
  private set sketch(s: DDSketch | null) {
    if (s !== null) this.lat = s;
    else if (this.lat instanceof DDSketch) this.lat = null;
  }

  /** The HyperLogLog once the users outgrew the small form, else null. */
  private get hll(): HyperLogLog | null {
    const u = this.usr;
    return u instanceof HyperLogLog ? u : null;
  }

  /** Sets the HyperLogLog; null leaves a small form as it is. */
  private set hll(h: HyperLogLog | null) {
    if (h !== null) this.usr = h;
    else if (this.usr instanceof HyperLogLog) this.usr = null;
  }

  /** The small form's sorted array (a new one while a lone latency is held inline: write it back to keep changes). */
  private get values(): number[] | null {
    const l = this.lat;
    if (typeof l === "number") return [l, NaN];
    return Array.isArray(l) ? l : null;
  }

  /** Sets the small form; null leaves a DDSketch as it is. */
  private set values(v: number[] | null) {
    if (v === null) {
      if (!(this.lat instanceof DDSketch)) this.lat = null;
    } else if (v.length === 2 && Number.isNaN(v[1]) && !Number.isNaN(v[0])) this.lat = v[0] as number;
    else this.lat = v;
  }

  /** `values` to read at once (no array made: a lone latency comes in a shared scratch array, valid until the next call). */
  private readValues(): number[] | null {
    const l = this.lat;
    if (typeof l === "number") {
      LONE_VALUE[0] = l;
      return LONE_VALUE;
    }
    return Array.isArray(l) ? l : null;
  }

  /** `entries` to read at once, as readValues. */
  private readEntries(): number[] | null {
    const u = this.usr;
    if (typeof u === "number") {
      LONE_ENTRY[0] = u;
      return LONE_ENTRY;
    }
    return Array.isArray(u) ? u : null;
  }

  /** The small form's sparse list (a new one while a lone entry is held inline: write it back to keep changes). */
  private get entries(): number[] | null {
    const u = this.usr;
    if (typeof u === "number") return [u, 0];
    return Array.isArray(u) ? u : null;
  }

  /** Sets the small form; null leaves a HyperLogLog as it is. */
  private set entries(list: number[] | null) {
    if (list === null) {
      if (!(this.usr instanceof HyperLogLog)) this.usr = null;
    } else if (list.length === 2 && list[1] === 0 && list[0] !== 0) this.usr = list[0] as number;
    else this.usr = list;
  }
  get errors(): number {
    return this._errors;
  }

  /** The latencies as a DDSketch: the sketch itself, or a copy of the small form (read it, do not change it). */
  get latency(): DDSketch {
    return this.sketch ?? DDSketch.ofExact(this.spec.relativeAccuracy, this.values);
  }

  /** The users as a HyperLogLog: the sketch itself, or one built from the small form (read it, do not change it). */
  get users(): HyperLogLog {
    if (this.hll !== null) return this.hll;
    const h = new HyperLogLog({ precision: this.spec.hllPrecision });
    this.forEachEntry((e) => h.addSparseEntry(e));
    return h;
  }

  /** quantile(q) of the latencies for each of `qs` (DDSketch.quantiles; exact in the small form). */
  quantiles(qs: readonly number[]): number[] {
    if (this.sketch !== null) return this.sketch.quantiles(qs);
    const values = this.readValues();
    const n = sizeOf(values);
    const out = new Array<number>(qs.length);
    for (let i = 0; i < qs.length; i++) {
      const q = qs[i] as number;
      // Validation as DDSketch.quantile's.
      out[i] =
        n === 0 || !(q >= 0 && q <= 1)
          ? this.latency.quantile(q)
          : ((values as number[])[Math.floor(q * (n - 1))] as number);
    }
    return out;
  }

  /** Distinct users (HyperLogLog.estimate, the same number in either form). */
  distinctUsers(): number {
    const u = this.usr;
    if (u instanceof HyperLogLog) return u.estimate();
    return HyperLogLog.sparseEstimate(u === null ? 0 : typeof u === "number" ? 1 : sparseSize(u));
  }

  /** One request. Throws (changing nothing) on a negative or non-finite latency. */
  add(latencyMs: number, error: boolean, user: string): void {
    this.addHashed(latencyMs, error, HyperLogLog.hash(user));
  }

  /** One request whose user was hashed once with HyperLogLog.hash. */
  addHashed(latencyMs: number, error: boolean, userHash: number): void {
    this.addLatency(latencyMs);
    if (error) this._errors++;
    const u = this.usr;
    if (u instanceof HyperLogLog) u.addHash(userHash);
    else this.addEntry(sparseEntryOf(userHash));
  }

  /** addHashed of a request whose inputs were derived once for all its aggregates (request-input.ts). */
  addInput(input: RequestInput): void {
    const l = this.lat;
    if (l instanceof DDSketch) l.addInput(input);
    else this.addLatency(input.latency);
    if (input.error) this._errors++;
    const u = this.usr;
    if (u instanceof HyperLogLog) u.addInput(input);
    else this.addEntry(input.entry);
  }

  private addLatency(latencyMs: number): void {
    const l = this.lat;
    if (l instanceof DDSketch) return l.add(latencyMs);
    if (!(latencyMs >= 0 && latencyMs < Infinity)) throw invalidValue("value", latencyMs);
    if (this.count < EXACT_LIMIT) this.values = insertSorted(this.values, latencyMs + 0, 1);
    else this.toSketch().add(latencyMs);
  }

  private addEntry(e: number): void {
    const list = sparseInsert(this.entries, e, this.spec.entryLimit);
    if (Array.isArray(list)) this.entries = list;
    else this.toHll().addSparseEntry(e);
  }

  private addUser(e: number): void {
    if (this.hll !== null) this.hll.addSparseEntry(e);
    else this.addEntry(e);
  }

  merge(other: RequestAggregate): void {
    if (other === this) other = this.clone();
    this.checkCompatible(other);
    if (other.sketch !== null) this.toSketch().merge(other.sketch);
    else {
      const theirs = other.values;
      const n = sizeOf(theirs);
      for (let i = 0; i < n; i++) this.addLatency((theirs as number[])[i] as number);
    }
    if (other.hll !== null) this.toHll().merge(other.hll);
    else other.forEachEntry((e) => this.addUser(e));
    this._errors += other._errors;
  }

  /**
   * Removes an aggregate known to be a subset (a pane already emitted): count, errors and latency
   * become exactly those of the rest. `users` is left as it is — a HyperLogLog cannot subtract — so
   * after a subtract it is the distinct users of the union, an upper bound of the rest's.
   */
  subtract(prefix: RequestAggregate): void {
    if (prefix._errors > this._errors) {
      throw new SketchError(
        "TM_SKETCH_NOT_SUBSET",
        `cannot subtract ${prefix._errors} errors from ${this._errors}; subtract only an aggregate merged in before`,
      );
    }
    if (prefix === this) prefix = this.clone();
    this.checkCompatible(prefix);
    if (this.sketch === null && prefix.sketch === null) {
      const theirs = prefix.values;
      if (theirs !== null) {
        const mine = this.values;
        if (!containsAll(mine, theirs)) throw notSubset("a value of the prefix is missing");
        const n = sizeOf(theirs);
        for (let i = 0; i < n; i++) removeSorted(mine as number[], theirs[i] as number, 1);
        this.values = mine;
      }
    } else {
      // Atomic: DDSketch.subtract changes nothing when it throws (this.latency is a copy while small).
      const rest = this.latency;
      rest.subtract(prefix.latency);
      this.lat = rest;
    }
    this._errors -= prefix._errors;
  }

  /** A copy, of this object's own class (a subclass's clone is of the subclass). */
  clone(): RequestAggregate {
    const c = new (this.constructor as AggregateClass<RequestAggregate>)(this.spec);
    c._errors = this._errors;
    c.values = this.values === null ? null : this.values.slice();
    c.sketch = this.sketch === null ? null : this.sketch.clone();
    c.entries = this.entries === null ? null : this.entries.slice();
    c.hll = this.hll === null ? null : this.hll.clone();
    return c;
  }

  /** Honest estimate of the heap bytes this aggregate holds (engine's state_bytes metric). */
  heapBytes(): number {
    // The object (4 fields); a lone latency or entry is a field (a fraction boxed: 16 bytes).
    const l = this.lat;
    const u = this.usr;
    let n = 56;
    if (typeof l === "number") n += Number.isInteger(l) ? 0 : 16;
    else if (Array.isArray(l)) n += 48 + 8 * l.length;
    else if (l !== null) n += l.heapBytes();
    if (Array.isArray(u)) n += 48 + 8 * u.length;
    else if (u instanceof HyperLogLog) n += u.heapBytes();
    return n;
  }

  /**
   * @internal Bytes of the sketches' data packed (DDSketch.dataBytes, HyperLogLog.dataBytes; the
   * small forms at 8 per latency, 4 per entry): what no layout of the state holds in less.
   */
  dataBytes(): number {
    const l = this.lat;
    const u = this.usr;
    let n = typeof l === "number" ? 8 : Array.isArray(l) ? 8 * sizeOf(l) : l === null ? 0 : l.dataBytes();
    n += typeof u === "number" ? 4 : Array.isArray(u) ? 4 * sparseSize(u) : u === null ? 0 : u.dataBytes();
    return n;
  }

  encode(): Uint8Array {
    return encodeWith((w) => this.writeTo(w));
  }

  /**
   * The bytes `encode()` returns, handed to `use` as `buf[0 … length)`, valid only during the
   * call: no copy or allocation for a caller that copies them into its own buffer.
   */
  encodeInto(use: (buf: Uint8Array, length: number) => void): void {
    // No closure or writer per call: a checkpoint encodes every open aggregate this way.
    const w = lendWriter();
    try {
      this.writeTo(w);
      use(w.target, w.written);
    } finally {
      returnWriter(w);
    }
  }

  private writeTo(w: ByteWriter): void {
    w.byte(VERSION);
    w.byte(TAG);
    w.varint(this._errors);
    // Each field read once (a checkpoint encodes every open aggregate).
    const l = this.lat;
    if (l instanceof DDSketch) l.encodeTo(w);
    else DDSketch.encodeExactTo(w, this.spec.relativeAccuracy, this.readValues());
    const u = this.usr;
    if (u instanceof HyperLogLog) u.encodeTo(w);
    else HyperLogLog.encodeListTo(w, this.spec.hllPrecision, this.readEntries());
  }

  /** Decodes `bytes`, as an instance of the class it is called on (a subclass decodes to the subclass). */
  static decode<T extends RequestAggregate>(this: AggregateClass<T>, bytes: Uint8Array): T {
    return RequestAggregate.decodeRange.call(this, bytes, 0, bytes.length) as T;
  }

  /**
   * decode() of `bytes[start … end)`, without a view of it (a checkpoint holds one per key), as an
   * instance of the class it is called on: an engine's subclass is decoded as itself, no wrapper
   * object per key.
   */
  static decodeRange<T extends RequestAggregate>(
    this: AggregateClass<T>,
    bytes: Uint8Array,
    start: number,
    end: number,
  ): T {
    // The class to build (static `this`), held for readAggregate: no closure per decoded aggregate.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    readClass = this;
    try {
      return decodeReusing(bytes, "RequestAggregate", readAggregate, start, end) as T;
    } finally {
      readClass = RequestAggregate;
    }
  }

  /** @internal The reading half of decode, into an instance of `this`. */
  static readFrom<T extends RequestAggregate>(this: AggregateClass<T>, r: ByteReader): T {
    r.header(VERSION, TAG);
    const errors = r.varint();
    // Each form straight into its field: no DDSketch or HyperLogLog made for a small form.
    const lat = DDSketch.readLatencies(r);
    const alpha = DDSketch.decodedAccuracy;
    const usr = HyperLogLog.readUsers(r, true);
    const a = new this(specFor(alpha, HyperLogLog.decodedPrecision));
    a.lat = lat;
    if (errors > a.count) throw corrupt("RequestAggregate (more errors than requests)");
    a._errors = errors;
    a.usr = usr;
    return a;
  }

  /** Calls fn for each sparse entry of the small form (none once `hll` holds the users). */
  private forEachEntry(fn: (e: number) => void): void {
    const list = this.entries;
    if (list === null) return;
    for (let i = 0; i < list.length && list[i] !== 0; i++) fn(list[i] as number);
  }

  /** Moves the latencies into a DDSketch (idempotent) and returns it. */
  private toSketch(): DDSketch {
    if (this.sketch !== null) return this.sketch;
    return (this.lat = DDSketch.ofExact(this.spec.relativeAccuracy, this.values));
  }

  /** Moves the users into a HyperLogLog (idempotent) and returns it. */
  private toHll(): HyperLogLog {
    if (this.hll !== null) return this.hll;
    const h = new HyperLogLog({ precision: this.spec.hllPrecision });
    this.forEachEntry((e) => h.addSparseEntry(e));
    return (this.usr = h);
  }

  private checkCompatible(other: RequestAggregate): void {
    if (other.spec.relativeAccuracy !== this.spec.relativeAccuracy) {
      throw new SketchError(
        "TM_SKETCH_MISMATCH",
        `cannot combine DDSketches of relativeAccuracy ${this.spec.relativeAccuracy} and ${other.spec.relativeAccuracy}; use one accuracy`,
      );
    }
    if (other.spec.hllPrecision !== this.spec.hllPrecision) {
      throw new SketchError(
        "TM_SKETCH_MISMATCH",
        `cannot merge HyperLogLogs of precision ${this.spec.hllPrecision} and ${other.spec.hllPrecision}; use one precision`,
      );
    }
  }
}

/** RequestAggregate or a subclass: what decode builds (its constructor takes the options). */
export type AggregateClass<T extends RequestAggregate> = new (options?: RequestAggregateOptions) => T;

/** The class decodeRange was called on, while it runs (no closure per decoded aggregate). */
let readClass: AggregateClass<RequestAggregate> = RequestAggregate;

function readAggregate(r: ByteReader): RequestAggregate {
  return RequestAggregate.readFrom.call(readClass, r);
}
