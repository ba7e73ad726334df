/**
 * Where an alert points: the dashboard panel that draws its metric, opened on the alert's policy,
 * window size and service through the app's URL state (dashboard/app/lib/url-state.ts).
 */
import type { AlertPanel } from "../../protocol/alerts.js";
import { METRICS } from "../prom/metric-catalog.js";
import type { RuleShape } from "./rule-shape.js";

/** By metric family, whatever its level (service, route, all services). */
const BY_FAMILY: Record<string, AlertPanel> = {
  requests: "requests",
  request_rate: "requests",
  errors: "errorRate",
  error_ratio: "errorRate",
  users: "users",
  sessions: "sessions",
  session_errors: "sessions",
  session_error_ratio: "sessions",
  session_duration_ms: "sessions",
  session_events: "sessions",
};
const BY_QUANTILE: Record<string, AlertPanel> = {
  "0.5": "p50",
  "0.9": "p95",
  "0.95": "p95",
  "0.99": "p99",
  "0.999": "p99",
};

/** The panel of the rule's metric, or null (bias and emit-delay metrics have none). */
export function panelOf(shape: Pick<RuleShape, "metric" | "quantile">): AlertPanel | null {
  const family = METRICS.find((d) => d.name === shape.metric)?.family;
  if (family === "latency_ms") return BY_QUANTILE[shape.quantile ?? "0.99"] ?? "p99";
  return (family && BY_FAMILY[family]) || null;
}

/**
 * `<dashboard>/?range=1h&window=10s&services=checkout&policy.errorRate=alerting#errorRate`: the
 * app scrolls to the panel named after `#`. The read token is never put in it (Alertmanager shows
 * the URL to everyone who sees the alert).
 */
export function generatorUrl(
  dashboardUrl: string,
  shape: Pick<RuleShape, "metric" | "quantile" | "policy" | "windowMs">,
  service: string | null,
): string {
  const panel = panelOf(shape);
  const q = new URLSearchParams();
  q.set("range", "1h");
  q.set("window", `${shape.windowMs / 1000}s`);
  if (service !== null) q.set("services", service);
  if (panel !== null) q.set(`policy.${panel}`, shape.policy);
  return `${dashboardUrl.replace(/\/+$/, "")}/?${q.toString()}${panel === null ? "" : `#${panel}`}`;
}
