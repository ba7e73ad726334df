/** The production aggregate: @tidemark/sketches' RequestAggregate (DDSketch + HyperLogLog). */
import { HyperLogLog, RequestAggregate } from "@tidemark/sketches";
import type { PaneValue } from "../../protocol.js";
import type { Aggregate, AggregateKind, UserHash } from "./aggregate.js";

/** A pane's quantiles, ascending: DDSketch.quantiles answers them in one pass over the bins. */
const PANE_QUANTILES: readonly number[] = [0.5, 0.9, 0.95, 0.99, 0.999];

function finite(v: number | undefined): number {
  return v !== undefined && Number.isFinite(v) ? v : 0;
}

/**
 * A RequestAggregate that is the core's Aggregate itself (a subclass, not a wrapper: one object per
 * key fewer to allocate, hold and restore). It keeps no pane value: the pane emitter keeps one per
 * (window, key), as numbers (panes/pane-tracks.ts; docs/decisions/0049-compact-state.md, "Second pass").
 */
export class SketchAggregate extends RequestAggregate implements Aggregate {
  /** The core hands a user's hash (hashed once per event); RequestAggregate's own callers a name. */
  override add(latencyMs: number, error: boolean, user: UserHash | string): void {
    if (typeof user === "number") this.addHashed(latencyMs, error, user);
    else super.add(latencyMs, error, user);
  }
  override merge(other: Aggregate | RequestAggregate): void {
    super.merge(other as SketchAggregate);
  }
  override subtract(prefix: Aggregate | RequestAggregate): void {
    super.subtract(prefix as SketchAggregate);
  }
  override clone(): SketchAggregate {
    return super.clone() as SketchAggregate;
  }
  value(): PaneValue {
    const a = this as RequestAggregate;
    const count = a.count;
    const qs = a.quantiles(PANE_QUANTILES);
    return Object.freeze({
      count,
      errors: a.errors,
      errorRate: count === 0 ? 0 : a.errors / count,
      p50: finite(qs[0]),
      p90: finite(qs[1]),
      p95: finite(qs[2]),
      p99: finite(qs[3]),
      p999: finite(qs[4]),
      users: Math.round(a.distinctUsers()),
    });
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
