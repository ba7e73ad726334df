/**
 * A pane value (protocol.ts `PaneValue` without `latencyAbove`) as nine doubles in one array:
 * count, errors, errorRate, p50, p90, p95, p99, p999, users (docs/decisions/0049-compact-state.md,
 * "Second pass"). A plain array of numbers keeps them unboxed, where the value object holds a
 * pointer per field and a boxed double per fraction: what an aggregate keeps of its value
 * (sketch-aggregate.ts), and a retracting policy of its last pane's (panes/pane-tracks.ts), is this
 * array, the same one while the aggregate's count is unchanged. Never changed once made.
 */
import type { PaneValue } from "../../protocol.js";

export type ValueNumbers = readonly number[];

export function numbersOfValue(v: PaneValue): ValueNumbers {
  return [v.count, v.errors, v.errorRate, v.p50, v.p90, v.p95, v.p99, v.p999, v.users];
}

/** The frozen value object of the numbers: the fields in the order panes' JSON has always had. */
export function valueOfNumbers(n: ValueNumbers): PaneValue {
  return Object.freeze({
    count: n[0] as number,
    errors: n[1] as number,
    errorRate: n[2] as number,
    p50: n[3] as number,
    p90: n[4] as number,
    p95: n[5] as number,
    p99: n[6] as number,
    p999: n[7] as number,
    users: n[8] as number,
  });
}

/** An aggregate that keeps its value as numbers (SketchAggregate): the array value() is built from. */
export interface HasValueNumbers {
  valueNumbers(): ValueNumbers;
}

export function hasValueNumbers(a: object): a is HasValueNumbers {
  return typeof (a as Partial<HasValueNumbers>).valueNumbers === "function";
}
