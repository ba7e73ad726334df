/** tidemark's PromQL (Prometheus 2.42 over floats): parse with lezer-promql, evaluate against a Queryable (docs/prometheus-api.md). */
export { parsePromql } from "./parse.js";
export { evaluateInstant, DEFAULT_LOOKBACK_MS, DEFAULT_SUBQUERY_STEP_MS, type EvalOptions } from "./evaluate.js";
export { evaluateRange, rangeSteps, type StepRange } from "./range-steps.js";
export { QueryGuard, QueryLimitError, type GuardLimits, type GuardClock, type QueryLimit } from "./query-guard.js";
export { typeOf, type Expr, type SelectorExpr, type ValueType } from "./ast.js";
export { METRIC_NAME, signature, compareLabels, type Labels } from "./labels.js";
export { matcher, matchesAll, type Matcher, type MatchOp } from "./matcher.js";
export { upperBound, type Queryable, type SeriesView } from "./queryable.js";
export { formatValue, type RangeSeries, type Sample, type Value } from "./values.js";
export { durationMs } from "./literals.js";
