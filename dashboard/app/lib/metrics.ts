import type { Pane, PaneBias } from "@tidemark/engine/protocol";
import type { MetricName } from "../../protocol/ws-frames.js";
import { formatDuration, formatNumber, type MetricUnit, type ShownBias } from "./format.js";

/** A nowcast's corrected values, and the bias field each one's measured error is in. */
export type NowcastField = "count" | "errorRate" | "p99" | "users";

export type PanelKind = "requests" | "errorRate" | "p50" | "p95" | "p99" | "users" | "sessions";

/** A secondary figure under a panel's headline, e.g. the session duration p95. */
export interface Detail {
  readonly name: string;
  readonly text: string;
}

/** What a panel plots: how to read a pane, how to pool services, and which bias applies. */
export interface MetricDef {
  readonly panel: PanelKind;
  readonly title: string;
  readonly metric: MetricName;
  readonly unit: MetricUnit;
  /** The value of one pane in the panel's unit. */
  value(p: Pane): number;
  /** The headline over several services' panes of one window, pooled in the browser (lib/service-pool.ts). */
  pool(panes: readonly Pane[]): number;
  /** How `pool` reads in the headline's scope line, e.g. "sum of 4 services". */
  readonly poolLabel: "sum" | "max" | "overall";
  /**
   * What a headline says when it pools services here because the engine sent no all-services
   * pane (docs/websocket-protocol.md, "Pooling services"): how, and what that gets wrong.
   */
  readonly pooledNote: string;
  /** The measured bias in the panel's unit (signed, policy − reference), or null when not measured. */
  bias(b: PaneBias): ShownBias | null;
  /** Which nowcast value corrects this metric (docs/websocket-protocol.md, "Nowcast"); absent: none does. */
  readonly nowcast?: NowcastField;
  /** Further figures of the newest window, over the same services (sessions: durations, error share). */
  details?(panes: readonly Pane[]): Detail[];
}

/**
 * Requests per second. An early pane holds what arrived so far, so its rate is taken over the
 * part of the window elapsed at emission (log time), at least 1 s; otherwise over the window.
 */
const rate = (p: Pane): number => {
  const size = p.window.end - p.window.start;
  const span = p.kind === "early" ? Math.min(size, Math.max(1000, p.emittedAt - p.window.start)) : size;
  return p.value.count / (span / 1000);
};
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const max = (xs: readonly number[]): number => (xs.length === 0 ? NaN : Math.max(...xs));

/** A bias field in its unit with its spread, as measured (the sign kept). */
const measured = (b: PaneBias, f: keyof NonNullable<PaneBias["spread"]>, unit: "%" | "pp"): ShownBias | null => {
  const v = b[f];
  return v === null ? null : { value: v, unit, spread: b.spread?.[f] ?? null };
};
/** countPct and usersPct are shortfalls (positive = under-counts); shown signed as policy − reference. */
const shortfall = (b: PaneBias, f: "countPct" | "usersPct"): ShownBias | null => {
  const m = measured(b, f, "%");
  return m === null ? null : { ...m, value: -m.value };
};
const countBias = (b: PaneBias) => shortfall(b, "countPct");
const usersBias = (b: PaneBias) => shortfall(b, "usersPct");

function latency(q: "p50" | "p95" | "p99"): MetricDef {
  return {
    panel: q,
    title: `Latency ${q}`,
    metric: "latency",
    unit: "ms",
    value: (p) => p.value[q],
    pool: (ps) => max(ps.map((p) => p.value[q])),
    poolLabel: "max",
    pooledNote: `pooled in the browser: the largest service's ${q}, not the ${q} of all requests`,
    bias: (b) => (q === "p99" ? measured(b, "p99Pct", "%") : null),
    ...(q === "p99" ? { nowcast: "p99" as const } : {}),
  };
}

/** Error sessions over all sessions of the panes, in %. */
const errorShare = (ps: readonly Pane[]): number => {
  const n = sum(ps.map((p) => p.value.count));
  return n === 0 ? NaN : (100 * sum(ps.map((p) => p.value.errors))) / n;
};

/** Events per session over all sessions of the panes. */
const eventsPerSession = (ps: readonly Pane[]): number => {
  const n = sum(ps.map((p) => p.value.count));
  return n === 0 ? NaN : sum(ps.map((p) => p.sessions?.events ?? 0)) / n;
};

/**
 * Sessions ended per window (the engine's session panes, docs/websocket-protocol.md): the count is
 * the headline; the duration quantiles (largest over services), the share of sessions that saw an
 * error and the events per session are its details. Bias: the policy's session-count shortfall.
 */
const SESSIONS: MetricDef = {
  panel: "sessions",
  title: "Sessions ended",
  metric: "sessions",
  unit: "sessions",
  value: (p) => p.value.count,
  pool: (ps) => sum(ps.map((p) => p.value.count)),
  poolLabel: "sum",
  pooledNote: "pooled in the browser: sessions summed",
  bias: countBias,
  details: (ps) => [
    { name: "p50", text: `duration p50 ${formatDuration(max(ps.map((p) => p.value.p50)))}` },
    { name: "p95", text: `p95 ${formatDuration(max(ps.map((p) => p.value.p95)))}` },
    { name: "errors", text: `error sessions ${formatNumber(errorShare(ps))} %` },
    { name: "events", text: `${formatNumber(eventsPerSession(ps))} events/session` },
  ],
};

export const METRICS: readonly MetricDef[] = [
  {
    panel: "requests",
    title: "Request rate",
    metric: "requests",
    unit: "req/s",
    value: rate,
    pool: (ps) => sum(ps.map(rate)),
    poolLabel: "sum",
    pooledNote: "pooled in the browser: rates summed",
    bias: countBias,
    nowcast: "count",
  },
  {
    panel: "errorRate",
    title: "Error rate",
    metric: "errorRate",
    unit: "%",
    value: (p) => p.value.errorRate * 100,
    pool: (ps) => {
      const count = sum(ps.map((p) => p.value.count));
      return count === 0 ? 0 : (100 * sum(ps.map((p) => p.value.errors))) / count;
    },
    poolLabel: "overall",
    pooledNote: "pooled in the browser: errors over all requests",
    bias: (b) => measured(b, "errorRatePp", "pp"),
    nowcast: "errorRate",
  },
  {
    panel: "users",
    title: "Distinct users",
    metric: "users",
    unit: "users",
    value: (p) => p.value.users,
    pool: (ps) => sum(ps.map((p) => p.value.users)),
    poolLabel: "sum",
    pooledNote: "pooled in the browser: users summed, a user of several services counted once per service",
    bias: usersBias,
    nowcast: "users",
  },
  latency("p50"),
  latency("p95"),
  latency("p99"),
  SESSIONS,
];

export function metricDef(panel: PanelKind): MetricDef {
  const m = METRICS.find((d) => d.panel === panel);
  if (!m) throw new Error(`unknown panel ${panel}`);
  return m;
}
