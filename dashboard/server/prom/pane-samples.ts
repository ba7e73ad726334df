/**
 * The series the Prometheus API answers from: every pane the dashboard's store is offered, kept as
 * compact rows per pane series, bounded per series and in all (docs/prometheus-api.md, "Series
 * and labels"; docs/decisions/0011-prometheus-api.md, "Series from panes").
 */
import type { Pane } from "@tidemark/engine/protocol";
import { matchesAll, METRIC_NAME, type Labels, type Matcher, type Queryable } from "../promql/index.js";
import { METRICS, type MetricDef } from "./metric-catalog.js";
import { COL, keyLevel, KINDS, PaneSeries, RETRACT } from "./pane-series.js";
import { PANE_KIND, PaneView } from "./pane-view.js";

/** Every kind but retract (which has no sample). */
const ALL_KINDS = KINDS.reduce((m, _, k) => (k === RETRACT ? m : m | (1 << k)), 0);

export interface PaneSamplesOptions {
  /** Windows kept per pane series. */
  readonly windowsPerSeries: number;
  /** Windows kept in all; past it the oldest windows across all series go, a tenth at a time. */
  readonly maxWindows: number;
  /** Policies in discarding mode: their window panes carry deltas, added up per window. */
  readonly discardingPolicies: readonly string[];
}

/**
 * The identity labels of a key's series at its level: service `{policy, window, service}`, route
 * `{…, route}`, all services `{policy, window}` (docs/decisions/0037-prometheus-data-model.md).
 */
export function keyLabels(policy: string, windowMs: number, service: string, route: string | undefined): Labels {
  const level = keyLevel(service, route);
  const labels: Record<string, string> = { policy, window: windowLabel(windowMs) };
  if (level !== "all") labels["service"] = service;
  if (level === "route") labels["route"] = route as string;
  return labels;
}

/** The `window` label: whole seconds ("10s", "60s"), as the config and /api/panes write sizes; else ms. */
export function windowLabel(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * True when a selector's matchers (`pane_kind` aside) select a series of this key under some
 * metric of the key's level, as `PaneSamples.select` does: what alert rules read.
 */
export function selectsKey(
  matchers: readonly Matcher[],
  key: { policy: string; windowMs: number; service: string; route: string | undefined; sessions: boolean },
): boolean {
  const identity = matchers.filter((m) => m.name !== PANE_KIND);
  const labels = keyLabels(key.policy, key.windowMs, key.service, key.route);
  const level = keyLevel(key.service, key.route);
  return METRICS.some(
    (d) => d.level === level && d.sessions === key.sessions && matchesAll({ ...staticLabels(d), ...labels }, identity),
  );
}

export class PaneSamples implements Queryable {
  private readonly series = new Map<string, PaneSeries>();
  private readonly labelCache = new Map<PaneSeries, Labels[]>();
  private readonly discarding: Set<string>;
  private total = 0;

  constructor(private readonly opts: PaneSamplesOptions) {
    this.discarding = new Set(opts.discardingPolicies);
  }

  /** Windows held, all series. */
  get size(): number {
    return this.total;
  }

  /** Takes a window pane or a session pane; idempotent on (id, seq). */
  apply(pane: Pane): void {
    const key = pane.id.slice(0, pane.id.lastIndexOf("|"));
    let s = this.series.get(key);
    if (!s) {
      const sessions = pane.key.user !== undefined;
      s = new PaneSeries(
        pane.policy,
        pane.key.service,
        pane.key.route,
        pane.window.end - pane.window.start,
        sessions,
        this.opts.windowsPerSeries,
        this.discarding.has(pane.policy),
      );
      this.series.set(key, s);
    }
    this.total += s.apply(pane);
    if (this.total > this.opts.maxWindows) this.trim(Math.floor(this.opts.maxWindows * 0.9));
  }

  /**
   * Views of every (metric, pane series) whose labels match; `pane_kind` matchers select samples.
   * A metric reads the series of its own level alone.
   */
  select(matchers: readonly Matcher[]): PaneView[] {
    const identity = matchers.filter((m) => m.name !== PANE_KIND);
    const kind = matchers.filter((m) => m.name === PANE_KIND);
    const named = identity.filter((m) => m.name === METRIC_NAME || m.name === "quantile");
    const out: PaneView[] = [];
    METRICS.forEach((def, d) => {
      if (!matchesAll(staticLabels(def), named)) return;
      for (const s of this.series.values()) {
        if (s.level !== def.level || s.sessions !== def.sessions || s.length === 0) continue;
        const labels = this.labelsOf(s, def, d);
        if (matchesAll(labels, identity)) out.push(new PaneView(s, def, labels, kind));
      }
    });
    return out;
  }

  /** Label sets of the matching series with a sample in [fromMs, toMs], one per pane_kind seen there. */
  seriesIn(matchers: readonly Matcher[], fromMs: number, toMs: number): Labels[] {
    const out: Labels[] = [];
    for (const view of this.select(matchers)) out.push(...labelSetsIn(view, fromMs, toMs));
    return out;
  }

  /**
   * `seriesIn` in turns: the label sets found in each run of `every` (metric, pane series) pairs
   * (an empty list when none matched), so a caller can give the event loop a turn between runs
   * (label-routes.ts). `select` keeps its own loop: queries call it on their hot path.
   */
  *seriesScan(matchers: readonly Matcher[], fromMs: number, toMs: number, every: number): Generator<Labels[]> {
    const identity = matchers.filter((m) => m.name !== PANE_KIND);
    const kind = matchers.filter((m) => m.name === PANE_KIND);
    const named = identity.filter((m) => m.name === METRIC_NAME || m.name === "quantile");
    let out: Labels[] = [];
    let visited = 0;
    for (let d = 0; d < METRICS.length; d++) {
      const def = METRICS[d] as MetricDef;
      if (!matchesAll(staticLabels(def), named)) continue;
      for (const s of this.series.values()) {
        if (++visited % every === 0) {
          yield out;
          out = [];
        }
        if (s.level !== def.level || s.sessions !== def.sessions || s.length === 0) continue;
        const labels = this.labelsOf(s, def, d);
        if (matchesAll(labels, identity)) out.push(...labelSetsIn(new PaneView(s, def, labels, kind), fromMs, toMs));
      }
    }
    yield out;
  }

  private labelsOf(s: PaneSeries, def: MetricDef, d: number): Labels {
    let cache = this.labelCache.get(s);
    if (!cache) this.labelCache.set(s, (cache = []));
    return (cache[d] ??= { ...staticLabels(def), ...keyLabels(s.policy, s.windowMs, s.service, s.route) });
  }

  /** Forgets the oldest windows across all series until `keep` remain. */
  private trim(keep: number): void {
    const starts = new Float64Array(this.total);
    let n = 0;
    for (const s of this.series.values()) for (let i = 0; i < s.length; i++) starts[n++] = s.at(i, COL.start);
    starts.sort();
    const cutoff = starts[n - keep] ?? -Infinity;
    for (const [key, s] of this.series) {
      this.total -= s.forgetBefore(cutoff);
      if (s.length === 0) {
        this.series.delete(key);
        this.labelCache.delete(s);
      }
    }
  }
}

/** The view's label sets with a sample in [fromMs, toMs], one per pane_kind seen there. */
function labelSetsIn(view: PaneView, fromMs: number, toMs: number): Labels[] {
  const out: Labels[] = [];
  const s = view.series;
  const hi = s.lowerBound(toMs - s.windowMs + 1);
  let seen = 0;
  for (let i = s.lowerBound(fromMs - s.windowMs); i < hi && seen !== ALL_KINDS; i++) {
    const bit = 1 << s.kind(i);
    if ((seen & bit) !== 0 || !view.present(i)) continue;
    seen |= bit;
    out.push(view.sampleLabels(i));
  }
  return out;
}

const statics = new WeakMap<MetricDef, Labels>();
function staticLabels(def: MetricDef): Labels {
  let l = statics.get(def);
  if (!l)
    statics.set(
      def,
      (l = def.quantile ? { [METRIC_NAME]: def.name, quantile: def.quantile } : { [METRIC_NAME]: def.name }),
    );
  return l;
}
