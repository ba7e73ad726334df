/**
 * histogram_quantile over classic bucket series (an `le` label), as Prometheus 2.42's
 * bucketQuantile (promql/quantile.go). tidemark's own series carry quantiles, not buckets: given
 * those, it is a 422 that says what to read instead (docs/prometheus-api.md, "PromQL").
 */
import { DashboardError } from "../errors.js";
import { dropName, pick, signatureOf, type Labels } from "./labels.js";
import type { Sample } from "./values.js";

interface Bucket {
  upper: number;
  count: number;
}

export function histogramQuantile(q: number, samples: readonly Sample[]): Sample[] {
  const groups = new Map<string, { labels: Labels; buckets: Bucket[] }>();
  for (const s of samples) {
    const le = s.labels["le"];
    if (le === undefined || le === "")
      throw new DashboardError(
        "TM_PROMQL_UNSUPPORTED",
        `function histogram_quantile is not supported on series without buckets: ${s.labels["__name__"] ?? "this series"} has no "le" label; tidemark ships quantiles, not buckets — read tidemark_latency_ms{quantile="0.99"} (docs/prometheus-api.md)`,
      );
    const upper = parseBound(le);
    if (upper === undefined) continue;
    const sig = signatureOf(s.labels, (n) => n !== "le");
    let g = groups.get(sig);
    if (!g) groups.set(sig, (g = { labels: dropName(pick(s.labels, (n) => n !== "le")), buckets: [] }));
    g.buckets.push({ upper, count: s.value });
  }
  return [...groups.values()].map((g) => ({ labels: g.labels, value: bucketQuantile(q, g.buckets) }));
}

function parseBound(le: string): number | undefined {
  const t = le.trim().toLowerCase();
  if (t === "+inf" || t === "inf") return Infinity;
  if (t === "-inf") return -Infinity;
  const v = Number(le);
  return le.trim() === "" || Number.isNaN(v) ? undefined : v;
}

function bucketQuantile(q: number, input: Bucket[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const sorted = [...input].sort((a, b) => a.upper - b.upper);
  if ((sorted[sorted.length - 1] as Bucket).upper !== Infinity) return NaN;
  const buckets: Bucket[] = [];
  for (const b of sorted) {
    const last = buckets[buckets.length - 1];
    if (last && last.upper === b.upper) last.count += b.count;
    else buckets.push({ ...b });
  }
  let max = (buckets[0] as Bucket).count;
  for (const b of buckets.slice(1)) {
    if (b.count > max) max = b.count;
    else if (b.count < max) b.count = max;
  }
  if (buckets.length < 2) return NaN;
  const observations = (buckets[buckets.length - 1] as Bucket).count;
  if (observations === 0) return NaN;
  let rank = q * observations;
  let b = 0;
  while (b < buckets.length - 1 && (buckets[b] as Bucket).count < rank) b++;
  if (b === buckets.length - 1) return (buckets[buckets.length - 2] as Bucket).upper;
  if (b === 0 && (buckets[0] as Bucket).upper <= 0) return (buckets[0] as Bucket).upper;
  let start = 0;
  const end = (buckets[b] as Bucket).upper;
  let count = (buckets[b] as Bucket).count;
  if (b > 0) {
    const prev = buckets[b - 1] as Bucket;
    start = prev.upper;
    count -= prev.count;
    rank -= prev.count;
  }
  return start + (end - start) * (rank / count);
}
