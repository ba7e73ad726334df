import type { Pane, PaneBias } from "@tidemark/engine/protocol";
import type { MetricName } from "../../server/ws-frames.js";

export type PanelKind = "requests" | "errorRate" | "p50" | "p95" | "p99" | "users";

/** What a panel plots: how to read a pane, how to combine services, and which bias applies. */
export interface MetricDef {
  readonly panel: PanelKind;
  readonly title: string;
  readonly metric: MetricName;
  readonly unit: "req/s" | "%" | "ms" | "users";
  /** The value of one pane in the panel's unit. */
  value(p: Pane): number;
  /** The headline over several services' panes of one window. */
  combine(panes: readonly Pane[]): number;
  /** How `combine` reads in the headline's scope line, e.g. "sum of 4 services". */
  readonly combineLabel: "sum" | "max" | "overall";
  /** The measured bias in the panel's unit (signed, policy − reference), or null when not measured. */
  bias(b: PaneBias): { value: number; unit: "%" | "pp" } | null;
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

/** countPct is a shortfall (positive = under-counts); shown signed as policy − reference. */
const countBias = (b: PaneBias) => (b.countPct === null ? null : { value: -b.countPct, unit: "%" as const });

function latency(q: "p50" | "p95" | "p99"): MetricDef {
  return {
    panel: q,
    title: `Latency ${q}`,
    metric: "latency",
    unit: "ms",
    value: (p) => p.value[q],
    combine: (ps) => max(ps.map((p) => p.value[q])),
    combineLabel: "max",
    bias: (b) => (q === "p99" && b.p99Pct !== null ? { value: b.p99Pct, unit: "%" } : null),
  };
}

export const METRICS: readonly MetricDef[] = [
  { panel: "requests", title: "Request rate", metric: "requests", unit: "req/s", value: rate, combine: (ps) => sum(ps.map(rate)), combineLabel: "sum", bias: countBias },
  {
    panel: "errorRate",
    title: "Error rate",
    metric: "errorRate",
    unit: "%",
    value: (p) => p.value.errorRate * 100,
    combine: (ps) => {
      const count = sum(ps.map((p) => p.value.count));
      return count === 0 ? 0 : (100 * sum(ps.map((p) => p.value.errors))) / count;
    },
    combineLabel: "overall",
    bias: (b) => (b.errorRatePp === null ? null : { value: b.errorRatePp, unit: "pp" }),
  },
  { panel: "users", title: "Distinct users", metric: "users", unit: "users", value: (p) => p.value.users, combine: (ps) => sum(ps.map((p) => p.value.users)), combineLabel: "sum", bias: () => null },
  latency("p50"),
  latency("p95"),
  latency("p99"),
];

export function metricDef(panel: PanelKind): MetricDef {
  const m = METRICS.find((d) => d.panel === panel);
  if (!m) throw new Error(`unknown panel ${panel}`);
  return m;
}
