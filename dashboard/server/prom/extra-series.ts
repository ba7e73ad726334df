/**
 * Series the Prometheus API serves beside the panes' (docs/prometheus-api.md): the SLOs' (docs/slo.md,
 * "Series"). Queried, listed and described like the pane series; no bias warnings of their own.
 */
import type { Labels, Matcher, SeriesView } from "../promql/index.js";

export interface ExtraSeries {
  select(matchers: readonly Matcher[]): SeriesView[];
  seriesIn(matchers: readonly Matcher[], fromMs: number, toMs: number): Labels[];
  /** For /api/v1/metadata. */
  readonly metrics: ReadonlyArray<{ name: string; help: string }>;
}
