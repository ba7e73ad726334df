/**
 * The metrics the Prometheus API serves from panes (docs/prometheus-api.md, "Metrics" and "The
 * data model"): what each reads from a pane series' row, whether it is a per-window count
 * (`rate`/`increase` add those up), and which measured bias its warnings report. Each family has
 * one name per level — service `tidemark_<family>`, route `tidemark_route_<family>`, all services
 * `tidemark_all_<family>` — so `sum()` over one name never counts a request twice
 * (docs/decisions/0037-prometheus-data-model.md).
 */
import { COL, type PaneSeries } from "./pane-series.js";

export type BiasField = "countPct" | "errorRatePp" | "p99Pct" | "usersPct";

/** The key level of a pane series: a service, a route of a service, or all services ("*"). */
import { LEVELS, type Level } from "./level.js";

export { LEVELS, type Level };
const PREFIX: Record<Level, string> = { service: "tidemark_", route: "tidemark_route_", all: "tidemark_all_" };

export interface MetricDef {
  readonly name: string;
  /** The family's name without its level prefix (`requests`, `latency_ms`, `bias_count_pct`). */
  readonly family: string;
  readonly level: Level;
  /** The `quantile` label of a quantile series. */
  readonly quantile?: string;
  /** Read from the session panes rather than the window panes. */
  readonly sessions: boolean;
  readonly additive: boolean;
  readonly help: string;
  readonly unit: string;
  /** The sample of row i; NaN = no sample (an unmeasured bias). */
  readonly value: (s: PaneSeries, i: number) => number;
  /** The biases a query of this metric is warned about. */
  readonly bias: readonly BiasField[];
}

const column =
  (c: number, scale = 1) =>
  (s: PaneSeries, i: number): number =>
    s.at(i, c) * scale;
const perSecond = (s: PaneSeries, i: number): number => s.at(i, COL.count) / (s.windowMs / 1000);
const seconds = (s: PaneSeries, i: number): number => s.at(i, COL.emitDelayMs) / 1000;

const QUANTILES: ReadonlyArray<readonly [string, number]> = [
  ["0.5", COL.p50],
  ["0.9", COL.p90],
  ["0.95", COL.p95],
  ["0.99", COL.p99],
  ["0.999", COL.p999],
];

/** A family, named without its level prefix; `METRICS` names it once per level. */
type Family = Omit<MetricDef, "level" | "family">;
type Spec = Omit<Family, "sessions" | "additive" | "bias" | "unit"> & Partial<Family>;
const gauge = (s: Spec): Family => ({ sessions: false, additive: false, bias: [], unit: "", ...s });
const count = (s: Spec): Family => gauge({ additive: true, ...s });

const NEWEST = "in the window ending at the sample's time, from the window's newest pane";

const WINDOW_METRICS: Family[] = [
  count({
    name: "requests",
    help: `Requests ${NEWEST} (a discarding policy's deltas added up).`,
    value: column(COL.count),
    bias: ["countPct"],
  }),
  count({
    name: "errors",
    help: `Requests with status >= 500 ${NEWEST}.`,
    value: column(COL.errors),
    bias: ["countPct", "errorRatePp"],
  }),
  gauge({
    name: "error_ratio",
    help: `Errors / requests (0..1) ${NEWEST}.`,
    unit: "ratio",
    value: column(COL.errorRate),
    bias: ["errorRatePp"],
  }),
  gauge({
    name: "request_rate",
    help: `Requests per second (count / window seconds) ${NEWEST}.`,
    unit: "requests per second",
    value: perSecond,
    bias: ["countPct"],
  }),
  ...QUANTILES.map(([quantile, c]) =>
    gauge({
      name: "latency_ms",
      quantile,
      help: `Latency quantile (DDSketch, ms) ${NEWEST}; a discarding policy's is an upper bound.`,
      unit: "milliseconds",
      value: column(c),
      bias: ["p99Pct"],
    }),
  ),
  gauge({
    name: "users",
    help: `Distinct users (HyperLogLog estimate) ${NEWEST}; a discarding policy's is an upper bound.`,
    value: column(COL.users),
    bias: ["usersPct"],
  }),
];

/** The dial: measured bias and emit delay per pane (docs/semantics.md, "Measured bias"); sessions measure no users bias (their p99 is the duration's). */
const DIAL_METRICS = (prefix: string, sessions: boolean): Family[] => [
  gauge({
    name: `${prefix}bias_count_pct`,
    sessions,
    help: "Measured count shortfall of the policy against the reference, % (positive: under-counts), carried by the pane.",
    unit: "percent",
    value: column(COL.countPct),
  }),
  gauge({
    name: `${prefix}bias_error_ratio_pp`,
    sessions,
    help: "Measured error-ratio difference, policy − reference, percentage points, carried by the pane.",
    unit: "percentage points",
    value: column(COL.errorRatePp),
  }),
  gauge({
    name: `${prefix}bias_p99_pct`,
    sessions,
    help: sessions
      ? "Measured session-duration p99 difference, policy − reference, % of the reference, carried by the pane."
      : "Measured p99 latency difference, policy − reference, % of the reference, carried by the pane.",
    unit: "percent",
    value: column(COL.p99Pct),
  }),
  ...(!sessions
    ? [
        gauge({
          name: `${prefix}bias_users_pct`,
          help: "Measured distinct-users shortfall against the reference, % (positive: under-counts), carried by the pane.",
          unit: "percent",
          value: column(COL.usersPct),
        }),
      ]
    : []),
  gauge({
    name: `${prefix}emit_delay_seconds`,
    sessions,
    help: "Emit delay of the window's newest pane: log time at emission − window end, seconds.",
    unit: "seconds",
    value: seconds,
  }),
];

const SESSION_METRICS: Family[] = [
  count({
    name: "sessions",
    sessions: true,
    help: `Sessions that ended ${NEWEST} (an early pane: those ended so far).`,
    value: column(COL.count),
    bias: ["countPct"],
  }),
  count({
    name: "session_errors",
    sessions: true,
    help: `Sessions that saw an error, of those ended ${NEWEST}.`,
    value: column(COL.errors),
    bias: ["countPct", "errorRatePp"],
  }),
  gauge({
    name: "session_error_ratio",
    sessions: true,
    help: `Share of ended sessions that saw an error (0..1) ${NEWEST}.`,
    unit: "ratio",
    value: column(COL.errorRate),
    bias: ["errorRatePp"],
  }),
  ...QUANTILES.map(([quantile, c]) =>
    gauge({
      name: "session_duration_ms",
      quantile,
      sessions: true,
      help: `Session duration quantile (ms) of the sessions ended ${NEWEST}.`,
      unit: "milliseconds",
      value: column(c),
      bias: quantile === "0.99" ? ["p99Pct"] : [],
    }),
  ),
  count({
    name: "session_events",
    sessions: true,
    help: `Events of the sessions that ended ${NEWEST} (per session: divided by tidemark_sessions).`,
    value: column(COL.events),
    bias: ["countPct"],
  }),
];

const SCOPE: Record<Level, string> = {
  service: "One series per service (labels policy, window, service).",
  route: "One series per route of a service (labels policy, window, service, route).",
  all: "All services together, merged by the engine (labels policy, window).",
};

/** The window panes' families exist at every level; the engine keys session panes by service alone. */
const FAMILIES: ReadonlyArray<readonly [Family, readonly Level[]]> = [
  ...[...WINDOW_METRICS, ...DIAL_METRICS("", false)].map((f) => [f, LEVELS] as const),
  ...[...SESSION_METRICS, ...DIAL_METRICS("session_", true)].map((f) => [f, ["service"] as const] as const),
];

/** Every metric: each family once per level it exists at, service level first. */
export const METRICS: readonly MetricDef[] = LEVELS.flatMap((level) =>
  FAMILIES.filter(([, levels]) => levels.includes(level)).map(([f]): MetricDef => ({
    ...f,
    family: f.name,
    level,
    name: PREFIX[level] + f.name,
    help: `${f.help} ${SCOPE[level]}`,
  })),
);

/** The level a metric name belongs to, or undefined when it names no tidemark metric. */
export function levelOf(name: string): Level | undefined {
  return METRICS.find((d) => d.name === name)?.level;
}
