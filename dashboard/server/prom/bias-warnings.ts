/**
 * `warnings` of a query that touched a policy with a measured bias (docs/prometheus-api.md,
 * "Warnings"): the bias that fits each metric queried, read from the newest pane the query used per
 * (policy, service) — today the policy's pooled bias, later a per-service one, unchanged here.
 */
import { isAllServices } from "../../protocol/all-services.js";
import type { BiasField } from "./metric-catalog.js";
import { COL } from "./pane-series.js";
import type { PaneView } from "./pane-view.js";

/** Biases that round to 0.0 say nothing. */
const NEGLIGIBLE = 0.05;
const SERVICES_LISTED = 5;

const WHAT: Record<BiasField, { what: string; unit: string; shortfall: boolean; col: number }> = {
  countPct: { what: "counts", unit: "%", shortfall: true, col: COL.countPct },
  errorRatePp: { what: "error ratio", unit: "pp", shortfall: false, col: COL.errorRatePp },
  p99Pct: { what: "p99 latency", unit: "%", shortfall: false, col: COL.p99Pct },
  usersPct: { what: "distinct users", unit: "%", shortfall: true, col: COL.usersPct },
};

interface Reading {
  start: number;
  value: number;
  windows: number;
}

export function biasWarnings(views: readonly PaneView[]): string[] {
  // (policy, sessions, field) → service → newest reading
  const readings = new Map<string, Map<string, Reading>>();
  for (const v of views) {
    const i = v.newestTouched;
    if (i < 0) continue;
    const s = v.series;
    for (const field of v.def.bias) {
      const value = s.at(i, WHAT[field].col);
      if (Number.isNaN(value)) continue;
      const key = `${s.policy}\u0000${s.sessions ? "sessions" : ""}\u0000${field}`;
      let byService = readings.get(key);
      if (!byService) readings.set(key, (byService = new Map()));
      const start = s.at(i, COL.start);
      const held = byService.get(s.service);
      if (!held || held.start < start) byService.set(s.service, { start, value, windows: s.at(i, COL.biasWindows) });
    }
  }
  const out: string[] = [];
  for (const [key, byService] of readings) {
    const [policy, sessions, field] = key.split("\u0000") as [string, string, BiasField];
    out.push(...phrases(policy, sessions !== "", field, byService));
  }
  return out.sort();
}

/** One warning per distinct figure, naming the services it applies to. */
function phrases(policy: string, sessions: boolean, field: BiasField, byService: Map<string, Reading>): string[] {
  const groups = new Map<string, { services: string[]; windows: number }>();
  for (const [service, r] of byService) {
    if (Math.abs(r.value) < NEGLIGIBLE) continue;
    const w = WHAT[field];
    const under = w.shortfall ? r.value > 0 : r.value < 0;
    const figure = `${sessions ? "session " : ""}${w.what} ${under ? "under" : "over"}-reported by ≈ ${Math.abs(r.value).toFixed(1)} ${w.unit}`;
    let g = groups.get(figure);
    if (!g) groups.set(figure, (g = { services: [], windows: r.windows }));
    g.services.push(isAllServices(service) ? "all services" : service);
  }
  return [...groups].map(([figure, g]) => {
    const names = g.services.sort();
    const listed = names.slice(0, SERVICES_LISTED).join(", ");
    const more = names.length > SERVICES_LISTED ? ` and ${names.length - SERVICES_LISTED} more` : "";
    return `${policy} policy: ${figure} for ${listed}${more} (measured against the reference over ${g.windows} closed windows)`;
  });
}
