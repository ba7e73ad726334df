/**
 * What the PromQL engine reads: series of per-window samples, selected by matchers. The engine is
 * pure; the dashboard's pane series implement this (docs/prometheus-api.md, "Series and labels").
 */
import type { Labels } from "./labels.js";
import type { Matcher } from "./matcher.js";

/** One series: samples ordered by time, one per window (at the window's end). */
export interface SeriesView {
  /** The series' identity, `__name__` included. */
  readonly labels: Labels;
  readonly length: number;
  /** Sample time, ms since epoch, ascending in i. */
  time(i: number): number;
  value(i: number): number;
  /** False when sample i has no value here (a retracted window, an unmeasured bias) or a sample-label matcher rejects it. */
  present(i: number): boolean;
  /** Labels of sample i: the identity plus the labels that belong to the sample (tidemark: `pane_kind`). */
  sampleLabels(i: number): Labels;
  /** True for per-window counts, which `rate` and `increase` add up; false for ratios, quantiles and gauges. */
  readonly additive: boolean;
  /** The window size behind each sample, ms: the instant lookback is at least this long. */
  readonly stepMs: number;
  /** The engine used sample i (the warnings read the bias of what a query touched). */
  touch(i: number): void;
  /**
   * Optional, for speed: writes the present samples among indices [lo, hi) — their times, values and
   * indices — into the arrays from 0 and returns how many: what present(), time() and value() give
   * one by one (docs/prometheus-api.md, "Sizing").
   */
  readPresent?(lo: number, hi: number, times: Float64Array, values: Float64Array, rows: Int32Array): number;
}

export interface Queryable {
  /** Series whose labels match every matcher (a matcher on a sample label selects samples, via present()). */
  select(matchers: readonly Matcher[]): readonly SeriesView[];
}

/** First index whose time is greater than t. */
export function upperBound(s: SeriesView, t: number): number {
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (s.time(mid) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
