import { decodeWith } from "./byte-reader.js";
import { encodeInPlace, encodeWith, type ByteWriter } from "./byte-writer.js";
import { DDSketch } from "./ddsketch.js";
import { SketchError, corrupt } from "./errors.js";
import { HyperLogLog } from "./hyperloglog.js";

export interface RequestAggregateOptions {
  /** DDSketch relative accuracy (default 0.01). */
  relativeAccuracy?: number;
  /** HyperLogLog precision (default 14). */
  hllPrecision?: number;
}

const VERSION = 1;
const TAG = 0x41; // "A"

/**
 * What the engine keeps per (window, key): request count, error count, a latency DDSketch and a
 * distinct-users HyperLogLog. `count` is the latency sketch's count (one latency per request).
 */
export class RequestAggregate {
  readonly latency: DDSketch;
  readonly users: HyperLogLog;
  private _errors: number;

  /** The last three arguments are internal (clone, decode): pass only options. */
  constructor(options: RequestAggregateOptions = {}, latency?: DDSketch, users?: HyperLogLog, errors = 0) {
    this.latency =
      latency ??
      new DDSketch(options.relativeAccuracy === undefined ? {} : { relativeAccuracy: options.relativeAccuracy });
    this.users =
      users ?? new HyperLogLog(options.hllPrecision === undefined ? {} : { precision: options.hllPrecision });
    this._errors = errors;
  }

  get count(): number {
    return this.latency.count;
  }
  get errors(): number {
    return this._errors;
  }

  /** One request. Throws (changing nothing) on a negative or non-finite latency. */
  add(latencyMs: number, error: boolean, user: string): void {
    this.addHashed(latencyMs, error, HyperLogLog.hash(user));
  }

  /** One request whose user was hashed once with HyperLogLog.hash. */
  addHashed(latencyMs: number, error: boolean, userHash: number): void {
    this.latency.add(latencyMs);
    if (error) this._errors++;
    this.users.addHash(userHash);
  }

  merge(other: RequestAggregate): void {
    this.latency.merge(other.latency);
    this.users.merge(other.users);
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
    this.latency.subtract(prefix.latency);
    this._errors -= prefix._errors;
  }

  clone(): RequestAggregate {
    return new RequestAggregate({}, this.latency.clone(), this.users.clone(), this._errors);
  }

  /** Honest estimate of the heap bytes this aggregate holds (engine's state_bytes metric). */
  heapBytes(): number {
    return 48 + this.latency.heapBytes() + this.users.heapBytes();
  }

  encode(): Uint8Array {
    return encodeWith((w) => this.writeTo(w));
  }

  /**
   * The bytes `encode()` returns, handed to `use` as `buf[0 … length)`, valid only during the
   * call: no copy or allocation for a caller that copies them into its own buffer.
   */
  encodeInto(use: (buf: Uint8Array, length: number) => void): void {
    encodeInPlace((w) => this.writeTo(w), use);
  }

  private writeTo(w: ByteWriter): void {
    w.byte(VERSION);
    w.byte(TAG);
    w.varint(this._errors);
    this.latency.encodeTo(w);
    this.users.encodeTo(w);
  }

  static decode(bytes: Uint8Array): RequestAggregate {
    return decodeWith(bytes, "RequestAggregate", (r) => {
      r.header(VERSION, TAG);
      const errors = r.varint();
      const latency = DDSketch.decodeFrom(r);
      const users = HyperLogLog.decodeFrom(r);
      if (errors > latency.count) throw corrupt("RequestAggregate (more errors than requests)");
      return new RequestAggregate({}, latency, users, errors);
    });
  }
}
