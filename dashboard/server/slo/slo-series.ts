/**
 * The SLOs as Prometheus series (docs/slo.md, "Series"): `tidemark_slo_burn_rate{slo, window}`,
 * `tidemark_slo_burn_rate_corrected{slo, window}`, `tidemark_slo_budget_remaining_ratio{slo}` and
 * `tidemark_slo_objective{slo}`, one sample per window end of the SLO's panes, the newest
 * MAX_POINTS kept per series (a counted bound).
 */
import { matchesAll, METRIC_NAME, type Labels, type Matcher, type SeriesView } from "../promql/index.js";
import type { Budget, WindowBurn } from "./burn-rate.js";
import type { SloDefinition } from "./slo-config.js";
import { windowText } from "./slo-text.js";

export const MAX_POINTS = 8640;

export const SLO_METRICS: ReadonlyArray<{ name: string; help: string }> = [
  {
    name: "tidemark_slo_burn_rate",
    help: "Error-budget burn rate over the window, as the policy's panes say (docs/slo.md).",
  },
  {
    name: "tidemark_slo_burn_rate_corrected",
    help: "Error-budget burn rate over the window, corrected by the measured bias of its panes (docs/slo.md).",
  },
  {
    name: "tidemark_slo_budget_remaining_ratio",
    help: "Error budget left over the SLO's period, corrected (docs/slo.md).",
  },
  { name: "tidemark_slo_objective", help: "The SLO's objective (docs/slo.md)." },
];

class Points implements SeriesView {
  readonly additive = false;
  private readonly times: number[] = [];
  private readonly values: number[] = [];

  constructor(
    readonly labels: Labels,
    readonly stepMs: number,
  ) {}

  get length(): number {
    return this.times.length;
  }

  /** A sample at t: replaces one at the same time, keeps times ascending. */
  put(t: number, v: number): void {
    let i = this.times.length;
    while (i > 0 && (this.times[i - 1] as number) > t) i--;
    if (i > 0 && this.times[i - 1] === t) this.values[i - 1] = v;
    else {
      this.times.splice(i, 0, t);
      this.values.splice(i, 0, v);
    }
    if (this.times.length > MAX_POINTS) {
      this.times.shift();
      this.values.shift();
    }
  }

  time(i: number): number {
    return this.times[i] as number;
  }
  value(i: number): number {
    return this.values[i] as number;
  }
  present(): boolean {
    return true;
  }
  sampleLabels(): Labels {
    return this.labels;
  }
  touch(): void {}
}

export class SloSeries {
  readonly metrics = SLO_METRICS;
  private readonly series = new Map<string, Points>();

  /** Records an SLO's burn rates per window and its budget at window end t. */
  record(slo: SloDefinition, t: number, burns: readonly WindowBurn[], budget: Budget): void {
    for (const b of burns) {
      const window = windowText(b.windowMs);
      this.point(slo, "tidemark_slo_burn_rate", { window }, t, b.raw);
      this.point(slo, "tidemark_slo_burn_rate_corrected", { window }, t, b.corrected);
    }
    this.point(slo, "tidemark_slo_budget_remaining_ratio", {}, t, budget.remaining);
    this.point(slo, "tidemark_slo_objective", {}, t, slo.objective);
  }

  select(matchers: readonly Matcher[]): SeriesView[] {
    return [...this.series.values()].filter((s) => s.length > 0 && matchesAll(s.labels, matchers));
  }

  /** Label sets of the matching series with a sample in [fromMs, toMs]. */
  seriesIn(matchers: readonly Matcher[], fromMs: number, toMs: number): Labels[] {
    return this.select(matchers)
      .filter((s) => {
        for (let i = 0; i < s.length; i++) if (s.time(i) >= fromMs && s.time(i) <= toMs) return true;
        return false;
      })
      .map((s) => s.labels);
  }

  private point(slo: SloDefinition, name: string, extra: Labels, t: number, v: number): void {
    const labels: Labels = { [METRIC_NAME]: name, slo: slo.name, ...extra };
    const key = JSON.stringify(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = new Points(labels, slo.paneMs)));
    s.put(t, v);
  }
}
