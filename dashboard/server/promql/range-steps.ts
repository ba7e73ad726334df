/**
 * A range query step by step (every step is an instant evaluation, as in Prometheus 2.42): a
 * generator that yields after each step (a plain selector: after each series), so that a driver may
 * give the event loop a turn between steps and stop a query past its deadline or abandoned by its
 * client (docs/prometheus-api.md, "Query limits"). The guard counts the points the result holds.
 */
import { DashboardError } from "../errors.js";
import { typeName, typeOf, type Expr, type SelectorExpr } from "./ast.js";
import { Evaluation, type EvalOptions } from "./evaluate.js";
import { compareLabels, type Labels } from "./labels.js";
import type { Queryable } from "./queryable.js";
import { RangePoints } from "./range-points.js";
import type { RangeSeries } from "./values.js";

export interface StepRange {
  readonly startMs: number;
  readonly endMs: number;
  readonly stepMs: number;
}

/** The range query's series, sorted by labels, as the generator's return value. */
export function* rangeSteps(
  expr: Expr,
  source: Queryable,
  range: StepRange,
  opts: EvalOptions = {},
): Generator<void, RangeSeries[]> {
  const t = typeOf(expr);
  if (t !== "scalar" && t !== "vector")
    throw new DashboardError(
      "TM_PROMQL_PARSE",
      `invalid expression type "${typeName(t)}" for range query, must be Scalar or instant Vector`,
    );
  const ev = new Evaluation(source, opts, expr, range.startMs, range.endMs);
  const series =
    expr.type === "selector" && !expr.at ? yield* selectorRange(ev, expr, range) : yield* stepRange(ev, expr, range);
  return series.sort((a, b) => compareLabels(a.labels, b.labels));
}

function* stepRange(ev: Evaluation, expr: Expr, range: StepRange): Generator<void, RangeSeries[]> {
  const points = new RangePoints();
  const none: Labels = {};
  for (let ts = range.startMs; ts <= range.endMs; ts += range.stepMs) {
    const v = ev.at(expr, ts);
    if (v.type === "scalar") points.add(none, ts, v.value);
    else if (v.type === "vector") for (const s of v.samples) points.add(s.labels, ts, s.value);
    ev.guard.endStep(v.type === "vector" ? v.samples.length : 1);
    yield;
  }
  return points.series();
}

/**
 * A plain selector over a range query's steps, as an instant selector at each step gives it, walking
 * each series' columns once with a cursor instead of searching them per step.
 */
function* selectorRange(ev: Evaluation, e: SelectorExpr, range: StepRange): Generator<void, RangeSeries[]> {
  const out: RangeSeries[] = [];
  for (const c of ev.columns(e)) {
    const lookback = ev.lookback(c.view);
    const points = new RangePoints();
    const { times, values, rows } = c;
    let next = 0;
    let n = 0;
    for (let ts = range.startMs; ts <= range.endMs; ts += range.stepMs) {
      const at = ts - e.offsetMs;
      while (next < c.length && (times[next] as number) <= at) next++;
      const j = next - 1;
      if (j < 0 || (times[j] as number) < at - lookback) continue;
      const i = rows[j] as number;
      c.view.touch(i);
      points.add(c.view.sampleLabels(i), ts, values[j] as number);
      n++;
    }
    out.push(...points.series());
    ev.guard.endStep(n);
    yield;
  }
  return out;
}

/** A range query's series, one point per step at which the expression has a value, sorted by labels. */
export function evaluateRange(
  expr: Expr,
  source: Queryable,
  range: { startMs: number; endMs: number; stepMs: number },
  opts: EvalOptions = {},
): RangeSeries[] {
  const steps = rangeSteps(expr, source, range, opts);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}
