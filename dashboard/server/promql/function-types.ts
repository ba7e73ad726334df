/**
 * The signatures of Prometheus 2.42's functions that apply to floats (promql/parser/functions.go):
 * argument types, how many trailing arguments may be left out, the return type
 * (docs/prometheus-api.md, "PromQL").
 */
import type { ValueType } from "./value-type.js";

export interface FunctionType {
  readonly args: readonly ValueType[];
  /** How many of the last arguments may be left out; -1: the last one repeats (label_join). */
  readonly optional: number;
  readonly returns: ValueType;
}

const V: ValueType = "vector";
const S: ValueType = "scalar";
const M: ValueType = "matrix";
const STR: ValueType = "string";

const of = (args: ValueType[], returns: ValueType = V, optional = 0): FunctionType => ({ args, returns, optional });

const SIMPLE = [
  "abs",
  "ceil",
  "floor",
  "exp",
  "sqrt",
  "ln",
  "log2",
  "log10",
  "sgn",
  "sin",
  "cos",
  "tan",
  "asin",
  "acos",
  "atan",
  "sinh",
  "cosh",
  "tanh",
  "asinh",
  "acosh",
  "atanh",
  "deg",
  "rad",
  "timestamp",
  "sort",
  "sort_desc",
  "absent",
];
const OVER_TIME = [
  "avg_over_time",
  "count_over_time",
  "last_over_time",
  "max_over_time",
  "min_over_time",
  "present_over_time",
  "stddev_over_time",
  "stdvar_over_time",
  "sum_over_time",
  "absent_over_time",
  "changes",
  "resets",
  "delta",
  "idelta",
  "deriv",
  "rate",
  "increase",
  "irate",
];
export const DATE_FUNCTIONS = [
  "day_of_month",
  "day_of_week",
  "day_of_year",
  "days_in_month",
  "hour",
  "minute",
  "month",
  "year",
];

export const FUNCTIONS: Readonly<Record<string, FunctionType>> = {
  ...Object.fromEntries(SIMPLE.map((f) => [f, of([V])])),
  ...Object.fromEntries(OVER_TIME.map((f) => [f, of([M])])),
  ...Object.fromEntries(DATE_FUNCTIONS.map((f) => [f, of([V], V, 1)])),
  quantile_over_time: of([S, M]),
  predict_linear: of([M, S]),
  holt_winters: of([M, S, S]),
  clamp: of([V, S, S]),
  clamp_max: of([V, S]),
  clamp_min: of([V, S]),
  round: of([V, S], V, 1),
  scalar: of([V], S),
  vector: of([S]),
  time: of([], S),
  pi: of([], S),
  label_replace: of([V, STR, STR, STR, STR]),
  label_join: of([V, STR, STR, STR], V, -1),
  histogram_quantile: of([S, V]),
};

/** Functions of Prometheus that tidemark refuses, with the reason (a 422). */
export const REFUSED: Readonly<Record<string, string>> = {
  histogram_count: "histogram_count reads native histograms, which tidemark does not have",
  histogram_sum: "histogram_sum reads native histograms, which tidemark does not have",
  histogram_fraction: "histogram_fraction reads native histograms, which tidemark does not have",
};
