/**
 * Functions over range vectors. `*_over_time` are exactly Prometheus's; `rate` and `increase` read
 * tidemark's samples for what they are — one count per window — so `increase` is the sum of the
 * windows' counts in the range and `rate` that sum per second of the range (docs/decisions/
 * 0011-prometheus-api.md, "rate and increase").
 */
import { DashboardError } from "../errors.js";
import type { RangeFunction } from "./ast.js";
import { formatLabels } from "./labels.js";
import { kahanSum } from "./aggregate.js";
import type { SeriesView } from "./queryable.js";

/** The function's value over a series' samples in the range, or undefined when it has none. */
export function overRange(
  fn: RangeFunction,
  view: SeriesView,
  values: readonly number[],
  rangeMs: number,
  text: string,
): number | undefined {
  if (fn === "rate" || fn === "increase")
    return countsOverRange(fn, view, kahanSum(values), values.length, rangeMs, text);
  if (values.length === 0) return undefined;
  switch (fn) {
    case "avg_over_time":
      return kahanSum(values) / values.length;
    case "max_over_time":
    case "min_over_time": {
      let best = values[0] as number;
      for (const v of values) if (Number.isNaN(best) || (fn === "max_over_time" ? v > best : v < best)) best = v;
      return best;
    }
  }
}

/** `increase` or `rate` of `n` window counts that add up to `sum` (undefined when n is 0). */
export function countsOverRange(
  fn: "rate" | "increase",
  view: SeriesView,
  sum: number,
  n: number,
  rangeMs: number,
  text: string,
): number | undefined {
  checkCounts(fn, view, rangeMs, text);
  if (n === 0) return undefined;
  return fn === "increase" ? sum : sum / (rangeMs / 1000);
}

function checkCounts(fn: RangeFunction, view: SeriesView, rangeMs: number, text: string): void {
  const name = view.labels["__name__"] ?? formatLabels(view.labels);
  if (!view.additive)
    throw new DashboardError(
      "TM_PROMQL_EXECUTION",
      `${fn}() adds up per-window counts, but ${name} is a per-window gauge (a ratio, quantile, rate or bias): use avg_over_time, max_over_time or min_over_time on ${text}`,
    );
  if (rangeMs < view.stepMs)
    throw new DashboardError(
      "TM_PROMQL_EXECUTION",
      `${fn}() over ${text}: the range is shorter than the ${view.stepMs / 1000}s window of ${name}, so no window fits in it; use a range of at least ${view.stepMs / 1000}s`,
    );
}
