/**
 * What a receiver must hold, from the panes in TM_PANES alone (not through the role's code): per
 * policy, the pane that settles each window (dashboard: on-time; alerting, billing: final), as
 * samples at the window's end with the Prometheus API's names and labels (docs/prometheus-api.md).
 */
import type { Pane } from "@tidemark/engine/protocol";
import { labelsKey } from "./prometheus-server.js";

/** The default policies' settling kinds (docs/semantics.md, "Policies are snapshot schedules"). */
export const SETTLES: Record<string, string> = { dashboard: "on-time", alerting: "final", billing: "final" };

/** The families checked, each as (name suffix, extra labels, value of a pane, or undefined = no sample). */
const FAMILIES: ReadonlyArray<readonly [string, Record<string, string>, (p: Pane) => number | null]> = [
  ["requests", {}, (p) => p.value.count],
  ["errors", {}, (p) => p.value.errors],
  ["latency_ms", { quantile: "0.99" }, (p) => p.value.p99],
  ["emit_delay_seconds", {}, (p) => p.emitDelayMs / 1000],
  ["bias_count_pct", {}, (p) => p.bias.countPct],
];

export const CHECKED_NAMES = FAMILIES.flatMap(([f]) => [`tidemark_${f}`, `tidemark_route_${f}`]);

/** `labels → [[end, value]…]` in time order, for the checked families of the settled panes given. */
export function expectedSamples(panes: readonly Pane[]): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  for (const p of panes) {
    if (SETTLES[p.policy] !== p.kind || p.key.service === "*" || p.key.user !== undefined) continue;
    const route = p.key.route;
    const key: Record<string, string> = {
      policy: p.policy,
      window: `${(p.window.end - p.window.start) / 1000}s`,
      service: p.key.service,
      pane_kind: p.kind,
      ...(route === undefined ? {} : { route }),
    };
    for (const [family, extra, value] of FAMILIES) {
      const v = value(p);
      if (v === null) continue;
      const name = `tidemark_${route === undefined ? "" : "route_"}${family}`;
      const k = labelsKey({ __name__: name, ...key, ...extra });
      const list = out.get(k) ?? [];
      list.push([p.window.end, v]);
      out.set(k, list);
    }
  }
  for (const list of out.values()) list.sort((a, b) => a[0] - b[0]);
  return out;
}
