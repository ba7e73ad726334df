/**
 * The dashboards' panels evaluated by brute force from the engine's panes (TM_PANES), independent
 * of the dashboard's PromQL: a selector at t takes each series' newest pane ending in
 * (t − lookback, t] whose value is present, lookback 5 min or the window if longer; increase/rate
 * add up the counts of the windows ending in (t − d, t] (docs/prometheus-api.md, "Semantics").
 */
import { ALL_SERVICES, type Pane } from "@tidemark/engine/protocol";

export type Level = "service" | "route" | "all";
/** Labels of an output series as JSON (sorted keys) → value. */
export type Reading = Map<string, number>;

export interface Scope {
  readonly policy: string;
  readonly windowMs: number;
  readonly level: Level;
  /** The `service=~` regex (fully anchored), service and route levels. */
  readonly service?: string;
}

interface Series {
  readonly service: string;
  readonly route: string | undefined;
  /** The newest pane of each window, by window end. */
  readonly panes: Pane[];
}

const LOOKBACK_MS = 300_000;

export function levelOf(p: Pane): Level {
  if (p.key.service === ALL_SERVICES) return "all";
  return p.key.route === undefined ? "service" : "route";
}

export class PaneOracle {
  private readonly series = new Map<string, Series[]>();

  /** @param panes the newest non-retract pane per id (window panes; session panes are left out) */
  constructor(panes: readonly Pane[]) {
    const byKey = new Map<string, Series>();
    for (const p of panes) {
      if (p.key.user !== undefined) continue;
      const windowMs = p.window.end - p.window.start;
      const scope = `${p.policy}|${windowMs}|${levelOf(p)}`;
      const key = `${scope}|${p.key.service}|${p.key.route ?? ""}`;
      let s = byKey.get(key);
      if (!s) {
        byKey.set(key, (s = { service: p.key.service, route: p.key.route, panes: [] }));
        this.series.set(scope, [...(this.series.get(scope) ?? []), s]);
      }
      s.panes.push(p);
    }
    for (const s of byKey.values()) s.panes.sort((a, b) => a.window.end - b.window.end);
  }

  private select(scope: Scope): Series[] {
    const all = this.series.get(`${scope.policy}|${scope.windowMs}|${scope.level}`) ?? [];
    const re = scope.service === undefined ? undefined : new RegExp(`^(?:${scope.service})$`);
    return all.filter((s) => !re || re.test(s.service));
  }

  /** Per selected series, the selector's value at t: the newest present reading in the lookback. */
  at(scope: Scope, t: number, read: (p: Pane) => number | null): Array<{ s: Series; v: number }> {
    const lookback = Math.max(LOOKBACK_MS, scope.windowMs);
    const out: Array<{ s: Series; v: number }> = [];
    for (const s of this.select(scope)) {
      for (let i = s.panes.length - 1; i >= 0; i--) {
        const p = s.panes[i] as Pane;
        if (p.window.end > t) continue;
        if (p.window.end <= t - lookback) break;
        const v = read(p);
        if (v === null) continue;
        out.push({ s, v });
        break;
      }
    }
    return out;
  }

  /** Per selected series with a window ending in (t − rangeMs, t], the sum of their counts. */
  increase(scope: Scope, t: number, rangeMs: number): Array<{ s: Series; v: number }> {
    const out: Array<{ s: Series; v: number }> = [];
    for (const s of this.select(scope)) {
      const inRange = s.panes.filter((p) => p.window.end > t - rangeMs && p.window.end <= t);
      if (inRange.length > 0) out.push({ s, v: inRange.reduce((n, p) => n + p.value.count, 0) });
    }
    return out;
  }
}

/** Groups readings by the labels `by` names (of service and route) and folds each group. */
export function aggregate(
  readings: ReadonlyArray<{ s: Series; v: number }>,
  by: ReadonlyArray<"service" | "route">,
  fold: "max" | "sum",
): Reading {
  const out: Reading = new Map();
  for (const { s, v } of readings) {
    const labels: Record<string, string> = {};
    for (const l of by) if (s[l] !== undefined) labels[l] = s[l] as string;
    const key = labelKey(labels);
    const held = out.get(key);
    out.set(key, held === undefined ? v : fold === "max" ? Math.max(held, v) : held + v);
  }
  return out;
}

export function labelKey(labels: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))));
}
