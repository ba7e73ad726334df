/**
 * One metric of one pane series, as the PromQL engine reads it: a sample per window at its end;
 * none for a window whose newest pane is a retract, nor where a bias is unmeasured. `pane_kind`
 * belongs to the sample, not to the series (docs/decisions/0011-prometheus-api.md, "pane_kind").
 */
import type { Labels, Matcher, SeriesView } from "../promql/index.js";
import type { MetricDef } from "./metric-catalog.js";
import { KINDS, RETRACT, type PaneSeries } from "./pane-series.js";

export const PANE_KIND = "pane_kind";

export class PaneView implements SeriesView {
  /** The newest row the engine used (-1: none): its bias is the one a warning reports. */
  newestTouched = -1;
  private readonly byKind: Array<Labels | undefined> = [];
  private readonly kindOk: boolean[];

  constructor(
    readonly series: PaneSeries,
    readonly def: MetricDef,
    readonly labels: Labels,
    kindMatchers: readonly Matcher[],
  ) {
    this.kindOk = KINDS.map((k, i) => i !== RETRACT && kindMatchers.every((m) => m.test(k)));
  }

  get length(): number {
    return this.series.length;
  }

  get additive(): boolean {
    return this.def.additive;
  }

  get stepMs(): number {
    return this.series.windowMs;
  }

  time(i: number): number {
    return this.series.end(i);
  }

  value(i: number): number {
    return this.def.value(this.series, i);
  }

  present(i: number): boolean {
    return this.kindOk[this.series.kind(i)] === true && !Number.isNaN(this.value(i));
  }

  sampleLabels(i: number): Labels {
    const k = this.series.kind(i);
    return (this.byKind[k] ??= { ...this.labels, [PANE_KIND]: KINDS[k] as string });
  }

  readPresent(lo: number, hi: number, times: Float64Array, values: Float64Array, rows: Int32Array): number {
    const s = this.series;
    const value = this.def.value;
    const kindOk = this.kindOk;
    let n = 0;
    for (let i = lo; i < hi; i++) {
      if (kindOk[s.kind(i)] !== true) continue;
      const v = value(s, i);
      if (Number.isNaN(v)) continue;
      times[n] = s.end(i);
      values[n] = v;
      rows[n] = i;
      n++;
    }
    return n;
  }

  touch(i: number): void {
    if (i > this.newestTouched) this.newestTouched = i;
  }
}
