/**
 * A dashboard query as Grafana's Prometheus data source sends it (docs/operations.md, "Grafana and
 * promtool"): the interval from the time range, the panel's width and the data source's
 * `timeInterval`, the step and range aligned to it, and the expression with Grafana's built-in
 * variables ($__interval, $__rate_interval, $__range, …) and the dashboard's own filled in.
 */
import { readFileSync } from "node:fs";

/** The provisioned dashboard and data source, as Grafana reads them. */
export const DASHBOARD_FILE = new URL("../../../deploy/grafana/dashboards/tidemark-overview.json", import.meta.url);
const DATASOURCE_FILE = new URL("../../../deploy/grafana/provisioning/datasources/tidemark.yaml", import.meta.url);

export interface DashboardJson {
  templating: {
    list: Array<{ name: string; query: { query: string }; multi?: boolean; includeAll?: boolean; allValue?: string }>;
  };
  panels: Array<{ title: string; targets: Array<{ refId: string; expr: string }> }>;
}

export function readDashboard(): DashboardJson {
  return JSON.parse(readFileSync(DASHBOARD_FILE, "utf8")) as DashboardJson;
}

/** The data source's `jsonData.timeInterval` (Grafana's "scrape interval", the lowest interval), ms. */
export function scrapeIntervalMs(): number {
  const m = /^\s*timeInterval:\s*(\d+)s\s*$/m.exec(readFileSync(DATASOURCE_FILE, "utf8"));
  if (!m) throw new Error(`no timeInterval in ${DATASOURCE_FILE.pathname}`);
  return Number(m[1]) * 1000;
}

/** Grafana's roundInterval (public/app/core/utils/kbn): the nice interval near range / points, for 10 ms … 1 h. */
const ROUND: ReadonlyArray<readonly [number, number]> = [
  [15, 10],
  [35, 20],
  [75, 50],
  [150, 100],
  [350, 200],
  [750, 500],
  [1_500, 1_000],
  [3_500, 2_000],
  [7_500, 5_000],
  [12_500, 10_000],
  [17_500, 15_000],
  [25_000, 20_000],
  [45_000, 30_000],
  [90_000, 60_000],
  [210_000, 120_000],
  [450_000, 300_000],
  [750_000, 600_000],
  [1_050_000, 900_000],
  [1_500_000, 1_200_000],
  [2_700_000, 1_800_000],
  [5_400_000, 3_600_000],
];
function roundInterval(ms: number): number {
  return ROUND.find(([upTo]) => ms <= upTo)?.[1] ?? 3_600_000;
}

export interface GrafanaRequest {
  /** Form parameters of /api/v1/query_range, unix seconds. */
  readonly start: number;
  readonly end: number;
  readonly step: number;
  /** Grafana's built-in variables for this request. */
  readonly builtins: Readonly<Record<string, string>>;
  readonly rateIntervalMs: number;
}

/**
 * What Grafana sends for a panel `maxDataPoints` wide over [fromMs, toMs]: interval = the rounded
 * range / points, at least the scrape interval; step = it in seconds; start and end floored to a
 * multiple of step; $__rate_interval = max($__interval + scrape, 4 × scrape).
 */
export function grafanaRequest(fromMs: number, toMs: number, maxDataPoints: number): GrafanaRequest {
  const scrape = scrapeIntervalMs();
  const intervalMs = Math.max(roundInterval((toMs - fromMs) / maxDataPoints), scrape);
  const step = Math.max(intervalMs / 1000, 1);
  const rateIntervalMs = Math.max(step * 1000 + scrape, 4 * scrape);
  const rangeS = Math.round((toMs - fromMs) / 1000);
  return {
    start: Math.floor(fromMs / 1000 / step) * step,
    end: Math.floor(toMs / 1000 / step) * step,
    step,
    rateIntervalMs,
    builtins: {
      __interval: `${step}s`,
      __interval_ms: String(step * 1000),
      __rate_interval: `${rateIntervalMs / 1000}s`,
      __range: `${rangeS}s`,
      __range_s: String(rangeS),
      __range_ms: String(toMs - fromMs),
    },
  };
}

/** A dashboard variable's value: one string, or the values picked of a multi-value one, or All. */
export type VarValue = string | readonly string[] | { all: true };

/**
 * Fills `$name`, `${name}` and `[[name]]` as Grafana's Prometheus data source does: a multi-value
 * or include-All variable as a regex — All as its allValue, several values as `(a|b)` with regex
 * characters escaped; others as the value. An unknown variable is an error (not left in).
 */
export function interpolate(
  expr: string,
  dashboard: DashboardJson,
  values: Readonly<Record<string, VarValue>>,
  builtins: Readonly<Record<string, string>>,
): string {
  return expr.replace(/\$\{(\w+)\}|\[\[(\w+)\]\]|\$(\w+)/g, (_m, a?: string, b?: string, c?: string) => {
    const name = (a ?? b ?? c) as string;
    const builtin = builtins[name];
    if (builtin !== undefined) return builtin;
    const def = dashboard.templating.list.find((v) => v.name === name);
    const value = values[name];
    if (!def || value === undefined) throw new Error(`variable $${name} has no value in this replay`);
    if (typeof value === "object" && "all" in value) return def.allValue ?? ".*";
    const list = typeof value === "string" ? [value] : [...value];
    if (!(def.multi || def.includeAll)) return list.join(",");
    const escaped = list.map((v) => v.replace(/[\\^$*+?.()|[\]{}]/g, "\\$&"));
    return escaped.length === 1 ? (escaped[0] as string) : `(${escaped.join("|")})`;
  });
}
