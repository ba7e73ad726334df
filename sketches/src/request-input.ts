import { invalidValue } from "./errors.js";
import { DEFAULT_RELATIVE_ACCURACY } from "./ddsketch.js";
import { HASH_LO_SCALE } from "./hll-hash.js";
import { sparseEntryOf } from "./hyperloglog.js";
import { LogMapping } from "./log-mapping.js";

/**
 * One request's inputs to the aggregates it goes into, derived once (docs/decisions/0048-core-hot-path.md):
 * an engine adds every request to several aggregates (two window sizes × service and route), and
 * each `addInput` reads these fields instead of deriving them again — the latency's bin key at
 * one accuracy, the user hash split into the halves HyperLogLog reads and its sparse entry. A
 * caller keeps one object and `set`s it per request, so nothing is allocated per request and no
 * double crosses a call as an argument. Adding it changes a sketch exactly as `add` of the same
 * latency and user hash does.
 */
export class RequestInput {
  /** The latency, validated (finite, ≥ 0; −0 as 0). */
  latency = 0;
  error = false;
  /** HyperLogLog.hash of the user (53 bits). */
  hash = 0;
  /** The hash's top 32 bits and its low 21 (HLL_LO_BITS). */
  hashHi = 0;
  hashLo = 0;
  /** sparseEntryOf(hash): the HyperLogLog sparse entry. */
  entry = 0;
  /** `mapping.key(latency)` (0 for a zero latency, which no bin holds). */
  key = 0;
  /** The mapping `key` is of: a sketch of another accuracy computes its own. */
  readonly mapping: LogMapping;

  constructor(relativeAccuracy: number = DEFAULT_RELATIVE_ACCURACY) {
    this.mapping = LogMapping.of(relativeAccuracy);
  }

  /** Sets the fields for one request. Throws (changing nothing) on a negative or non-finite latency. */
  set(latencyMs: number, error: boolean, userHash: number): this {
    if (!(latencyMs >= 0 && latencyMs < Infinity)) throw invalidValue("value", latencyMs);
    const latency = latencyMs + 0;
    const hi = (userHash / HASH_LO_SCALE) >>> 0;
    this.latency = latency;
    this.error = error;
    this.hash = userHash;
    this.hashHi = hi;
    this.hashLo = userHash - hi * HASH_LO_SCALE;
    this.entry = sparseEntryOf(userHash);
    this.key = latency === 0 ? 0 : this.mapping.key(latency);
    return this;
  }
}
