/**
 * `rate`, `increase` and `irate` read tidemark's samples for what they are — one count per window —
 * not as a cumulative counter: `increase` is the sum of the windows' counts whose end lies in
 * (t − d, t], `rate` that sum per second of d, `irate` the newest such window's count per second of
 * its window (docs/decisions/0036-promql-as-prometheus.md, the one deliberate deviation from
 * Prometheus; docs/decisions/0011-prometheus-api.md).
 */
import { DashboardError } from "../errors.js";
import { formatLabels } from "./labels.js";
import type { SeriesView } from "./queryable.js";

export type CountFunction = "rate" | "increase" | "irate";

export const COUNT_FUNCTIONS: readonly string[] = ["rate", "increase", "irate"];

/**
 * The function over `n` window counts adding up to `sum`, the newest being `newest` (undefined
 * when n is 0).
 */
export function countsOverRange(
  fn: CountFunction,
  view: SeriesView,
  sum: number,
  newest: number,
  n: number,
  rangeMs: number,
  text: string,
): number | undefined {
  checkCounts(fn, view, rangeMs, text);
  if (n === 0) return undefined;
  if (fn === "irate") return newest / (view.stepMs / 1000);
  return fn === "increase" ? sum : sum / (rangeMs / 1000);
}

function checkCounts(fn: CountFunction, view: SeriesView, rangeMs: number, text: string): void {
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
