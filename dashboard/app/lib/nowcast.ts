import { poolBias, type BiasSpread, type Pane, type PaneBias } from "@tidemark/engine/protocol";
import { formatSigned, formatNumber } from "./format.js";
import type { MetricDef, NowcastField } from "./metrics.js";

/**
 * The nowcast of a panel's newest window (docs/websocket-protocol.md, "Nowcast"): the panes'
 * corrected values in the panel's unit, pooled over services like the values are, with the
 * interval and the nowcast's own measured error.
 */
export interface NowcastEstimate {
  value: number;
  /** 95 % interval half-width in the panel's unit; null when a bias has no spread yet. */
  spread: number | null;
  /** The nowcast's measured error (nowcast − reference) in the bias unit; null when not measured. */
  error: { value: number; unit: "%" | "pp"; spread: number | null; windows: number } | null;
}

/** The bias field a nowcast value's error is measured in, and its unit. */
const ERROR_FIELD: Record<NowcastField, { field: keyof BiasSpread; unit: "%" | "pp" }> = {
  count: { field: "countPct", unit: "%" },
  errorRate: { field: "errorRatePp", unit: "pp" },
  p99: { field: "p99Pct", unit: "%" },
  users: { field: "usersPct", unit: "%" },
};

/** One pane's corrected value in the panel's unit: a rate over the whole window, an error rate in %. */
function corrected(p: Pane, f: NowcastField): { value: number; spread: number | null } | null {
  const n = p.nowcast;
  if (!n) return null;
  const spread = n.spread[f];
  if (f === "count") {
    // The nowcast counts the whole window, whatever part of it had elapsed at emission.
    const s = (p.window.end - p.window.start) / 1000;
    return { value: n.value.count / s, spread: spread === null ? null : spread / s };
  }
  if (f === "errorRate") return { value: n.value.errorRate * 100, spread: spread === null ? null : spread * 100 };
  return { value: n.value[f], spread };
}

/**
 * The nowcast over the panes of one window and bias kind, or null when the metric has none or a pane
 * has none (no bias measured for its kind yet): a nowcast is never shown half-measured.
 */
export function nowcastOf(def: MetricDef, panes: readonly Pane[]): NowcastEstimate | null {
  const f = def.nowcast;
  if (f === undefined || panes.length === 0) return null;
  const parts = panes.map((p) => corrected(p, f));
  if (parts.some((c) => c === null)) return null;
  const cs = parts as Array<{ value: number; spread: number | null }>;
  const spreads = cs.map((c) => c.spread);
  const known = spreads.every((s) => s !== null);
  let value: number;
  let spread: number | null;
  if (def.poolLabel === "max") {
    const top = cs.reduce((a, c) => (c.value > a.value ? c : a));
    ({ value, spread } = top);
  } else if (def.poolLabel === "overall") {
    // Error rate over all services: weighted by the corrected counts.
    const w = panes.map((p) => p.nowcast?.value.count ?? 0);
    const total = w.reduce((a, b) => a + b, 0);
    const wmean = (xs: number[]) => (total === 0 ? 0 : xs.reduce((a, x, i) => a + x * (w[i] ?? 0), 0) / total);
    value = wmean(cs.map((c) => c.value));
    spread = known ? wmean(spreads as number[]) : null;
  } else {
    value = cs.reduce((a, c) => a + c.value, 0);
    // Summed half-widths: as if the services' errors were fully correlated, never narrower than measured.
    spread = known ? (spreads as number[]).reduce((a, b) => a + b, 0) : null;
  }
  return { value, spread, error: errorOf(panes, f) };
}

/** The nowcasts' measured errors, pooled over services by their window counts like biases. */
function errorOf(panes: readonly Pane[], f: NowcastField): NowcastEstimate["error"] {
  const { field, unit } = ERROR_FIELD[f];
  const asBias = (p: Pane): PaneBias => {
    const e = p.nowcast?.error;
    const spread = (e as { spread?: Partial<BiasSpread> } | undefined)?.spread;
    return {
      countPct: e?.countPct ?? null,
      errorRatePp: e?.errorRatePp ?? null,
      p99Pct: e?.p99Pct ?? null,
      usersPct: e?.usersPct ?? null,
      windows: e?.windows ?? 0,
      ...(spread ? { spread: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, ...spread } } : {}),
    };
  };
  if (panes.length === 0) return null;
  const e = poolBias(panes.map(asBias));
  const v = e[field];
  if (v === null || e.windows === 0) return null;
  return { value: v, unit, spread: e.spread?.[field] ?? null, windows: e.windows };
}

/** "nowcast error −0.1 ± 0.2 pp, 12 win.", or "nowcast error not measured yet". */
export function formatNowcastError(e: NowcastEstimate["error"]): string {
  if (e === null) return "nowcast error not measured yet";
  const interval = e.spread === null ? "" : ` \u00b1 ${formatNumber(e.spread)}`;
  return `nowcast error ${formatSigned(e.value)}${interval} ${e.unit}, ${e.windows} win.`;
}
