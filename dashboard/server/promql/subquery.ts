/**
 * A subquery at one step: its expression evaluated at each multiple of its step in
 * [t − offset − range, t − offset] (Prometheus 2.42 aligns the steps to the epoch), each time once
 * per query, within counted bounds (docs/prometheus-api.md, "PromQL").
 */
import { DashboardError } from "../errors.js";
import type { SubqueryExpr } from "./ast.js";
import type { EvalContext } from "./eval-context.js";
import { RangePoints } from "./range-points.js";
import type { RangeSeries, Sample } from "./values.js";

/** At most this many points of a subquery at one step (a range query's bound per series). */
export const MAX_SUBQUERY_POINTS = 11_000;
/** At most this many distinct times a subquery's expression is evaluated at over one query. */
export const MAX_SUBQUERY_EVALUATIONS = 100_000;

/** `cache` holds the expression's value at each time already evaluated in this query. */
export function subqueryAt(ev: EvalContext, e: SubqueryExpr, t: number, cache: Map<number, Sample[]>): RangeSeries[] {
  const ref = ev.evalTime(e.at, t) - e.offsetMs;
  const step = e.stepMs || ev.subqueryStepMs;
  const from = ref - e.rangeMs;
  let ti = Math.trunc(from / step) * step;
  if (ti < from) ti += step;
  if ((ref - ti) / step + 1 > MAX_SUBQUERY_POINTS)
    throw subqueryBound(e, `${Math.floor((ref - ti) / step) + 1} points at each step`, MAX_SUBQUERY_POINTS);
  const points = new RangePoints();
  for (; ti <= ref; ti += step) {
    let samples = cache.get(ti);
    if (!samples) {
      if (cache.size >= MAX_SUBQUERY_EVALUATIONS)
        throw subqueryBound(
          e,
          `more than ${MAX_SUBQUERY_EVALUATIONS} evaluations over the query`,
          MAX_SUBQUERY_EVALUATIONS,
        );
      cache.set(ti, (samples = ev.vector(e.expr, ti)));
    }
    for (const s of samples) points.add(s.labels, ti, s.value);
  }
  return points.series();
}

/** A 422 for a subquery past its counted bound, naming it and what to change. */
function subqueryBound(e: SubqueryExpr, what: string, max: number): DashboardError {
  return new DashboardError(
    "TM_PROMQL_EXECUTION",
    `subquery ${e.text} needs ${what}; at most ${max} are evaluated: use a larger subquery step or a shorter range (docs/prometheus-api.md, "PromQL")`,
  );
}
