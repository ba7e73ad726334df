/**
 * The one aggregate kept per (window slice, key): count, errors, latency quantiles, distinct
 * users (docs/semantics.md, "Policies are snapshot schedules"). Every policy reads snapshots of it;
 * it is the only per-event cost.
 */
import type { RequestInput } from "@tidemark/sketches";
import type { PaneValue } from "../../protocol.js";

/** A user identity hashed once per event. */
export type UserHash = number;

export interface Aggregate {
  readonly count: number;
  readonly errors: number;
  add(latencyMs: number, error: boolean, user: UserHash): void;
  /**
   * add() of a request whose inputs were derived once for every aggregate it goes into (the core's
   * hot path, docs/decisions/0048-core-hot-path.md): the same change as add(input.latency, input.error, input.hash).
   */
  addInput(input: RequestInput): void;
  merge(other: Aggregate): void;
  /** Removes a prefix of this aggregate's events (discarding panes). */
  subtract(prefix: Aggregate): void;
  clone(): Aggregate;
  value(): PaneValue;
  encode(): Uint8Array;
  /** Hands `encode()`'s bytes to `use` as `buf[0 … length)`, valid only during the call (snapshots copy them). */
  encodeInto(use: (buf: Uint8Array, length: number) => void): void;
  heapBytes(): number;
  /** Bytes of the sketches' data packed, no headers or slack (RequestAggregate.dataBytes): a floor for any layout. */
  dataBytes(): number;
}

export interface AggregateKind {
  /** An empty aggregate for a service key, or (`route`) for a (service, route) key. */
  create(route?: boolean): Aggregate;
  decode(bytes: Uint8Array): Aggregate;
  /** decode() of `bytes[start … end)` (restore: no view per key); decode of a view when absent. */
  decodeRange?(bytes: Uint8Array, start: number, end: number): Aggregate;
  hashUser(user: string): UserHash;
}
