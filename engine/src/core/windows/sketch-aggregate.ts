/** The production aggregate: @tidemark/sketches' RequestAggregate (DDSketch + HyperLogLog). */
import { HyperLogLog, RequestAggregate } from "@tidemark/sketches";
import type { PaneValue } from "../../protocol.js";
import type { Aggregate, AggregateKind, UserHash } from "./aggregate.js";
import { valueOfNumbers, type ValueNumbers } from "./value-numbers.js";

/** A pane's quantiles, ascending: DDSketch.quantiles answers them in one pass over the bins. */
const PANE_QUANTILES: readonly number[] = [0.5, 0.9, 0.95, 0.99, 0.999];

/** Values of aggregates with more events than this are kept (RequestAggregate's exact form holds up to 16). */
const KEEP_FROM = 16;

function finite(v: number | undefined): number {
  return v !== undefined && Number.isFinite(v) ? v : 0;
}

/**
 * A RequestAggregate that is the core's Aggregate itself (a subclass, not a wrapper: one object per
 * key fewer to allocate, hold and restore), with its pane value kept as nine numbers
 * (value-numbers.ts; docs/decisions/0049-compact-state.md, "Second pass").
 */
export class SketchAggregate extends RequestAggregate implements Aggregate {
  /** value()'s numbers at count `kept[0]`: aggregates only grow between merges, so they stay valid. */
  private kept: ValueNumbers | null = null;
  /** The core hands a user's hash (hashed once per event); RequestAggregate's own callers a name. */
  override add(latencyMs: number, error: boolean, user: UserHash | string): void {
    if (typeof user === "number") this.addHashed(latencyMs, error, user);
    else super.add(latencyMs, error, user);
  }
  override merge(other: Aggregate | RequestAggregate): void {
    this.kept = null;
    super.merge(other as SketchAggregate);
  }
  override subtract(prefix: Aggregate | RequestAggregate): void {
    this.kept = null;
    super.subtract(prefix as SketchAggregate);
  }
  override clone(): SketchAggregate {
    return super.clone() as SketchAggregate;
  }
  value(): PaneValue {
    return valueOfNumbers(this.valueNumbers());
  }
  /** value() as numbers (value-numbers.ts): the kept array while the count is unchanged (never change it). */
  valueNumbers(): ValueNumbers {
    const a = this as RequestAggregate;
    const count = a.count;
    const kept = this.kept;
    if (kept !== null && kept[0] === count) return kept;
    const qs = a.quantiles(PANE_QUANTILES);
    const errors = a.errors;
    const n: ValueNumbers = [
      count,
      errors,
      count === 0 ? 0 : errors / count,
      finite(qs[0]),
      finite(qs[1]),
      finite(qs[2]),
      finite(qs[3]),
      finite(qs[4]),
      Math.round(a.distinctUsers()),
    ];
    // Kept only where computing it costs: the small form's quantiles are array reads, and a key with
    // few events would hold an array per key (docs/decisions/0019-core-light.md).
    if (count > KEEP_FROM) this.kept = n;
    return n;
  }
  /** The kept array's field besides RequestAggregate's own. */
  override heapBytes(): number {
    return 8 + super.heapBytes();
  }
}

/**
 * HyperLogLog precision of route keys: 4 below the configured one (at least 4), so a route's
 * registers are 1/16 of a service's (docs/semantics.md, "Accuracy and state"). Standard error
 * 1.04/√2^p: 0.81 % for services and 3.25 % for routes at the default p = 14.
 */
export function routeHllPrecision(hllPrecision: number): number {
  return Math.max(4, hllPrecision - 4);
}

/** Aggregates with the configured DDSketch accuracy and HyperLogLog precision (routes: routeHllPrecision). */
export function sketchAggregates(relativeAccuracy: number, hllPrecision: number): AggregateKind {
  // Frozen: RequestAggregate remembers a frozen options object's checked form (no lookup per key).
  const service = Object.freeze({ relativeAccuracy, hllPrecision });
  const route = Object.freeze({ relativeAccuracy, hllPrecision: routeHllPrecision(hllPrecision) });
  return {
    create: (isRoute) => new SketchAggregate(isRoute === true ? route : service),
    decode: (bytes) => SketchAggregate.decode(bytes),
    decodeRange: (bytes, start, end) => SketchAggregate.decodeRange(bytes, start, end),
    hashUser: (user) => HyperLogLog.hash(user),
  };
}
