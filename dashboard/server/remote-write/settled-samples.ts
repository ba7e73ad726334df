/**
 * A settled pane as remote-write samples: every metric of the Prometheus API's catalog at the
 * pane's key level (docs/prometheus-api.md, "The data model" and "Metrics"), at the window's end,
 * with the API's labels. The catalog reads a series row, so the pane goes through a one-row
 * `PaneSeries`, the very code the query API serves from.
 */
import type { Pane } from "@tidemark/engine/protocol";
import { METRIC_NAME } from "../promql/index.js";
import { METRICS } from "../prom/metric-catalog.js";
import { keyLabels } from "../prom/pane-samples.js";
import { PaneSeries } from "../prom/pane-series.js";
import { PANE_KIND } from "../prom/pane-view.js";

export type Label = readonly [name: string, value: string];

export interface OutSample {
  /** The series' identity: its labels, sorted by name, joined. */
  readonly series: string;
  /** Sorted by name, as remote-write receivers expect. */
  readonly labels: readonly Label[];
  /** ms since epoch: the window's end. */
  readonly ts: number;
  readonly value: number;
}

/** The samples of one pane; metrics without a value (an unmeasured bias) give none. */
export function settledSamples(pane: Pane): OutSample[] {
  const sessions = pane.key.user !== undefined;
  const windowMs = pane.window.end - pane.window.start;
  const row = new PaneSeries(pane.policy, pane.key.service, pane.key.route, windowMs, sessions, 1, false);
  row.apply(pane);
  const key = keyLabels(pane.policy, windowMs, pane.key.service, pane.key.route);
  const out: OutSample[] = [];
  for (const def of METRICS) {
    if (def.level !== row.level || def.sessions !== sessions) continue;
    const value = def.value(row, 0);
    if (Number.isNaN(value)) continue;
    const labels: Record<string, string> = { [METRIC_NAME]: def.name, ...key, [PANE_KIND]: pane.kind };
    if (def.quantile !== undefined) labels["quantile"] = def.quantile;
    const sorted = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    out.push({ series: seriesKey(sorted), labels: sorted, ts: pane.window.end, value });
  }
  return out;
}

function seriesKey(labels: readonly Label[]): string {
  return labels.map(([n, v]) => `${n}=${JSON.stringify(v)}`).join(",");
}
