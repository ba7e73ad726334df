/** Results gathered step by step: points grouped by label set, and Prometheus's check for duplicate label sets. */
import { DashboardError } from "../errors.js";
import { signature, type Labels } from "./labels.js";
import type { RangeSeries, Sample } from "./values.js";

/**
 * Points grouped by label set. Label sets are looked up by identity first: the engine hands out the
 * same objects step after step (memoized labels), so the signature is only computed for a label set
 * it has not seen.
 */
export class RangePoints {
  private readonly bySig = new Map<string, RangeSeries>();
  private readonly byLabels = new Map<Labels, RangeSeries>();

  add(labels: Labels, ts: number, value: number): void {
    let series = this.byLabels.get(labels);
    if (!series) {
      const sig = signature(labels);
      series = this.bySig.get(sig);
      if (!series) this.bySig.set(sig, (series = { labels, times: [], values: [] }));
      this.byLabels.set(labels, series);
    }
    series.times.push(ts);
    series.values.push(value);
  }

  series(): RangeSeries[] {
    return [...this.bySig.values()];
  }
}

/** Prometheus's check after every operation: two results with one label set are an error. */
export function unique(samples: Sample[]): Sample[] {
  if (samples.length < 2) return samples;
  const seen = new Set<string>();
  for (const s of samples) {
    const sig = signature(s.labels);
    if (seen.has(sig))
      throw new DashboardError("TM_PROMQL_EXECUTION", "vector cannot contain metrics with the same labelset");
    seen.add(sig);
  }
  return samples;
}
