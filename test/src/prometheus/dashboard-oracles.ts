/**
 * What each target of the provisioned Grafana dashboard (deploy/grafana) must answer, computed by
 * brute force from the engine's panes (pane-oracle.ts), keyed `title#refId`: a target without an
 * entry here fails the replay in grafana.test.ts.
 */
import type { Pane } from "@tidemark/engine/protocol";
import { aggregate, type PaneOracle, type Reading, type Scope } from "./pane-oracle.js";

const W = 10_000;

export interface Vars {
  policy: string;
  windowMs: number;
  service: string;
  rateIntervalMs: number;
}
export type Oracle = (o: PaneOracle, v: Vars, t: number) => Reading;
/** The series a target selects: the `$service` regex, or every service (`null`: no service matcher). */
const scope = (v: Vars, level: Scope["level"] = "service", service: string | null = v.service): Scope => ({
  policy: v.policy,
  windowMs: v.windowMs,
  level,
  service: level === "all" || service === null ? undefined : service,
});
const perSecond = (p: Pane): number => p.value.count / ((p.window.end - p.window.start) / 1000);
const byService =
  (read: (p: Pane) => number | null): Oracle =>
  (o, v, t) =>
    aggregate(o.at(scope(v), t, read), ["service"], "max");

/** Each target of the provisioned dashboard (`title#refId`), evaluated from the panes. */
export const ORACLES: Record<string, Oracle> = {
  "Requests per second#A": byService(perSecond),
  "Count bias (policy − reference)#A": byService((p) => p.bias.countPct),
  "Error ratio#A": byService((p) => p.value.errorRate),
  "Error-ratio bias#A": byService((p) => p.bias.errorRatePp),
  "p99 latency#A": byService((p) => p.value.p99),
  "p99 bias#A": byService((p) => p.bias.p99Pct),
  "Distinct users#A": byService((p) => p.value.users),
  "Users bias#A": byService((p) => p.bias.usersPct),
  "Emit delay#A": byService((p) => p.emitDelayMs / 1000),
  "Requests in the last 5 minutes (increase)#A": (o, v, t) =>
    aggregate(o.increase(scope(v), t, 300_000), ["service"], "sum"),
  "All services: requests per second#A": (o, v, t) => aggregate(o.at(scope(v, "all"), t, perSecond), [], "max"),
  "All services: requests per second#B": (o, v, t) =>
    aggregate(o.at(scope(v, "service", null), t, perSecond), [], "sum"),
  "All services: distinct users#A": (o, v, t) =>
    aggregate(
      o.at(scope(v, "all"), t, (p) => p.value.users),
      [],
      "max",
    ),
  "All services: distinct users#B": (o, v, t) =>
    aggregate(
      o.at(scope(v, "service", null), t, (p) => p.value.users),
      [],
      "sum",
    ),
  "p99 latency per route#A": (o, v, t) =>
    aggregate(
      o.at(scope(v, "route"), t, (p) => p.value.p99),
      ["service", "route"],
      "max",
    ),
  "Requests per second, smoothed (10 s windows)#A": (o, v, t) => {
    const sums = aggregate(o.increase({ ...scope(v), windowMs: W }, t, v.rateIntervalMs), ["service"], "sum");
    return new Map([...sums].map(([k, n]) => [k, n / (v.rateIntervalMs / 1000)]));
  },
};

/** Sums of positive terms and a division may round differently by operation order: a few ulps; all else exact. */
export function agrees(got: number, want: number): boolean {
  return got === want || Math.abs(got - want) <= 8 * Number.EPSILON * Math.abs(want);
}
