/**
 * The differential test's queries, in the manner of prometheus/compliance's
 * promql-test-queries.yml: templates expanded over metrics, ranges, offsets, aggregations,
 * operators and functions. Selectors name `route=""` so that they read service-level series
 * whichever way route series are named. `DEVIATION` holds the rate/increase/irate queries, whose
 * tidemark meaning differs from Prometheus's on purpose and which have their own expected values
 * (docs/decisions/0036-promql-as-prometheus.md).
 */

const sel = (metric: string, extra = ""): string => `${metric}{route=""${extra ? `, ${extra}` : ""}}`;

const REQ = sel("tidemark_requests");
const ERR = sel("tidemark_errors");
const RATIO = sel("tidemark_error_ratio");
const P99 = sel("tidemark_latency_ms", 'quantile="0.99"');
const LAT = sel("tidemark_latency_ms");
const USERS = sel("tidemark_users");
const DELAY = sel("tidemark_emit_delay_seconds");
const GAUGES = [REQ, RATIO, P99, USERS, DELAY];
const RANGES = ["30s", "1m", "90s", "5m"];
const OFFSETS = ["1m", "5m", "-1m", "30s", "-2m"];
const GROUPINGS = ["", " by (service)", " without (service)", " by (policy, window)", " without (policy, quantile)"];

function cross<T, U>(as: readonly T[], bs: readonly U[]): Array<[T, U]> {
  return as.flatMap((a) => bs.map((b) => [a, b] as [T, U]));
}

const selectors = [
  ...GAUGES,
  LAT,
  sel("tidemark_requests", 'policy="exact", window="10s"'),
  sel("tidemark_requests", 'service=~"a.*|w.*"'),
  sel("tidemark_errors", 'service!="api"'),
  '{__name__=~"tidemark_(requests|errors)", route="", policy="quick"}',
  ...cross([REQ, P99], OFFSETS).map(([s, o]) => `${s} offset ${o}`),
  `${REQ} @ start()`,
  `${RATIO} @ end()`,
  `${P99} @ end() offset 1m`,
];

const aggregations = [
  ...cross(["sum", "avg", "min", "max", "count", "group", "stddev", "stdvar"], GROUPINGS).flatMap(([op, g]) => [
    `${op}${g} (${REQ})`,
    `${op}${g} (${P99})`,
  ]),
  ...cross(["topk", "bottomk"], ["1", "3"]).flatMap(([op, k]) => [
    `${op}(${k}, ${P99})`,
    `${op} by (policy) (${k}, ${USERS})`,
  ]),
  ...["0", "0.5", "0.9", "1", "-0.5", "1.5"].map((q) => `quantile(${q}, ${P99})`),
  `quantile by (service) (0.75, ${LAT})`,
  `count_values("users", ${USERS})`,
  `count_values by (policy) ("n", ${REQ})`,
  `count_values without (service) ("n", ${ERR})`,
  `sum by (__name__) (${REQ})`,
  `max without () (${RATIO})`,
];

const ARITH = ["+", "-", "*", "/", "%", "^", "atan2"];
const COMPARE = ["==", "!=", ">", "<", ">=", "<="];
const binaries = [
  ...ARITH.flatMap((op) => [`${REQ} ${op} 3`, `2 ${op} ${RATIO}`, `${ERR} ${op} ${REQ}`]),
  ...COMPARE.flatMap((op) => [`${REQ} ${op} 40`, `40 ${op} ${REQ}`, `${REQ} ${op} bool 40`, `${ERR} ${op} ${REQ}`]),
  ...COMPARE.map((op) => `${ERR} ${op} bool ${REQ}`),
  `${ERR} / ignoring(policy) ${sel("tidemark_requests", 'policy="exact"')}`,
  `${ERR} / on(policy, window, service) ${REQ}`,
  `${LAT} / on(policy, window, service) group_left ${REQ}`,
  `${LAT} * on(policy, window, service) group_left(__name__) ${USERS}`,
  `${REQ} + on(policy, window, service) group_right ${LAT}`,
  `${REQ} > on(policy, window, service) group_right ${LAT}`,
  `${LAT} / ignoring(quantile) group_left ${REQ}`,
  `sum by (policy, window) (${REQ}) / on(policy, window) group_right sum by (policy, window, service) (${ERR})`,
  `${REQ} and ${ERR} > 2`,
  `${REQ} and on(service) ${sel("tidemark_errors", 'policy="exact"')}`,
  `${REQ} or ${ERR}`,
  `${sel("tidemark_requests", 'service="api"')} or vector(0)`,
  `sum by (service) (${REQ}) or sum by (service) (${ERR})`,
  `${REQ} unless ${ERR} > 3`,
  `${REQ} unless on(policy) ${sel("tidemark_errors", 'policy="quick"')}`,
  `${REQ} unless ignoring(policy) ${sel("tidemark_errors", 'policy="quick"')} > 5`,
  `(${ERR} > 1) or (${REQ} < 100) and ${USERS}`,
  `-${REQ}`,
  `+${RATIO}`,
  `${REQ} / 0`,
  `-${REQ} / 0`,
  `${REQ} * 0 / 0`,
  `${REQ} > bool NaN`,
  `max(${REQ} / 0)`,
  `min(-${REQ} / 0)`,
  `sum(${REQ} * 0 / 0)`,
  `avg(${REQ} / 0)`,
  "1 + 1",
  "2 ^ 0.5",
  "-2 ^ 2",
  "7 % -3",
  "NaN",
  "Inf",
  "-Inf",
  "1 > bool 0",
  "0 / 0",
];

const overTime = [
  ...cross(
    [
      "sum_over_time",
      "avg_over_time",
      "min_over_time",
      "max_over_time",
      "count_over_time",
      "last_over_time",
      "stddev_over_time",
      "stdvar_over_time",
      "present_over_time",
      "changes",
      "resets",
      "delta",
      "idelta",
      "deriv",
    ],
    RANGES,
  ).flatMap(([fn, r]) => [`${fn}(${REQ}[${r}])`, `${fn}(${RATIO}[${r}])`]),
  ...cross(["0", "0.25", "0.9", "1", "-1", "2"], ["1m", "5m"]).map(
    ([q, r]) => `quantile_over_time(${q}, ${P99}[${r}])`,
  ),
  ...cross(["60", "-30", "0"], ["1m", "5m"]).map(([d, r]) => `predict_linear(${USERS}[${r}], ${d})`),
  ...cross(["0.5", "0.1"], ["0.3", "0.9"]).map(([sf, tf]) => `holt_winters(${P99}[5m], ${sf}, ${tf})`),
  ...OFFSETS.map((o) => `avg_over_time(${RATIO}[2m] offset ${o})`),
  `max_over_time(${P99}[1m] @ end())`,
  `sum_over_time(${REQ}[3m] @ start() offset -1m)`,
  `absent_over_time(${REQ}[1m])`,
  `absent_over_time(${sel("tidemark_requests", 'service="nope"')}[1m])`,
  `absent_over_time(nonexistent{service="x", policy=~"a.*"}[5m])`,
];

const MATH = ["abs", "ceil", "floor", "round", "sqrt", "ln", "log2", "log10", "sgn", "sin", "cos", "tan"];
const MATH_RATIO = ["asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "atanh", "deg", "rad", "exp"];
const functions = [
  ...MATH.flatMap((fn) => [`${fn}(${REQ})`, `${fn}(${RATIO} - 0.05)`]),
  ...MATH_RATIO.map((fn) => `${fn}(${RATIO})`),
  `acosh(${REQ})`,
  `exp(${REQ} / 100)`,
  `round(${P99}, 10)`,
  `round(${RATIO}, 0.01)`,
  `clamp(${REQ}, 20, 60)`,
  `clamp(${REQ}, 60, 20)`,
  `clamp_min(${REQ}, 40)`,
  `clamp_max(${REQ}, 40)`,
  `timestamp(${REQ})`,
  `timestamp(${REQ} offset 1m)`,
  `timestamp(${REQ} @ end())`,
  `timestamp(abs(${REQ}))`,
  "time()",
  "time() - 1700000000",
  "vector(1)",
  "vector(time())",
  `scalar(sum(${REQ}))`,
  `scalar(${REQ})`,
  `${REQ} * scalar(count(${REQ}))`,
  `label_replace(${REQ}, "svc", "s-$1", "service", "(.*)")`,
  `label_replace(${REQ}, "service", "", "service", "a.*")`,
  `label_replace(${REQ}, "pol", "$1$2", "policy", "(e)(x).*")`,
  `label_replace(${REQ}, "x", "\${1}y", "window", "([0-9]+)s")`,
  `label_join(${REQ}, "key", "/", "policy", "window", "service")`,
  `label_join(${REQ}, "service", "", "nothing")`,
  `absent(${REQ})`,
  `absent(nonexistent{service="x", policy=~"a.*", window="10s"})`,
  `absent(nonexistent{service="x", service="y"})`,
  `sort(${P99})`,
  `sort_desc(${P99})`,
  `sort(${REQ} / 0)`,
  `sort_desc(sum by (service) (${USERS}))`,
  ...["day_of_month", "day_of_week", "day_of_year", "days_in_month", "hour", "minute", "month", "year"].flatMap(
    (fn) => [`${fn}()`, `${fn}(timestamp(${REQ}))`, `${fn}(vector(1709251199))`],
  ),
  "pi()",
  `abs({__name__=~"tidemark_(requests|errors)", route=""})`,
  `${REQ} + on(policy) ${ERR}`,
  `${REQ} + ${sel("tidemark_errors", 'policy="exact"')} * on(policy, window) group_left ${ERR}`,
];

const subqueries = [
  `max_over_time(sum by (service) (${REQ})[5m:30s])`,
  `avg_over_time(${RATIO}[5m:])`,
  `min_over_time(${P99}[3m:20s] offset 1m)`,
  `deriv(sum(${USERS})[5m:1m])`,
  `sum_over_time(${REQ}[2m:10s])`,
  `count_over_time(${REQ}[2m:7s])`,
  `last_over_time(${P99}[1m:15s] @ end())`,
  `max_over_time(max_over_time(${REQ}[1m])[4m:30s])`,
  `quantile_over_time(0.5, (${REQ} * 2)[3m:30s])`,
  `sum(${REQ})[2m:30s]`,
  `${P99}[90s]`,
  `${RATIO}[2m] offset 1m`,
];

const edges = [
  `count_values("v", ${REQ} / 0)`,
  `count_values("v", ${P99} * 1e22)`,
  `round(${RATIO}, -0.05)`,
  `clamp(${REQ}, NaN, 100)`,
  `clamp_max(${REQ}, -Inf)`,
  `absent(sum(${sel("tidemark_requests", 'service="nope"')}))`,
  `vector(scalar(${REQ}))`,
  `-${REQ} ^ 2`,
  `${REQ} ^ -1`,
  `2 ^ -1`,
  `sum(${REQ}) by (service)`,
  `topk(scalar(count(${P99})) - 5, ${P99})`,
  "1 == bool 1",
  '"a string"',
  "time() > bool 1700000000",
  `changes(${RATIO}[5m:10s])`,
  `resets(${REQ}[5m:7s])`,
  `predict_linear(${USERS}[5m:1m], 60)`,
  `last_over_time(${REQ}[1m] offset -30s)`,
  `year(${REQ})`,
  `label_replace(${REQ}, "svc", "$1", "service", "(?i)(API|WEB)")`,
  `${sel("tidemark_requests", 'service=~"(?i)API"')}`,
  `max_over_time((${REQ} @ start())[2m:30s])`,
  `sum_over_time(sum_over_time(${REQ}[1m:10s])[3m:1m] @ end())`,
  `stddev by (service) (${LAT})`,
  `avg(${REQ} / 0) or vector(1)`,
];

/** Every query whose answer must equal Prometheus 2.42's. */
export const CORPUS: readonly string[] = [
  ...selectors,
  ...aggregations,
  ...binaries,
  ...overTime,
  ...functions,
  ...subqueries,
  ...edges,
];

/** rate, increase, irate: tidemark's per-window meaning, compared with expected values of their own. */
export const DEVIATION: ReadonlyArray<{
  fn: "rate" | "increase" | "irate";
  metric: string;
  range: string;
  offset: string;
}> = cross(["rate", "increase", "irate"] as const, ["1m", "5m", "90s"]).flatMap(([fn, range]) => [
  { fn, metric: "tidemark_requests", range, offset: "" },
  { fn, metric: "tidemark_errors", range, offset: " offset 1m" },
]);

/** A deviation query's text. */
export function deviationQuery(d: (typeof DEVIATION)[number]): string {
  return `${d.fn}(${sel(d.metric)}[${d.range}]${d.offset})`;
}

/** Queries whose top-level order is the answer (compared in order, by value). */
export function isOrdered(query: string): boolean {
  return /^(sort|sort_desc|topk|bottomk)\b/.test(query);
}
