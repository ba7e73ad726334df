/**
 * Functions over range vectors, as Prometheus 2.42 computes them over the points of one series in
 * [t − offset − range, t − offset] (promql/functions.go) — except `rate`, `increase` and `irate`,
 * which read tidemark's samples for what they are, one count per window (rate-functions.ts;
 * docs/decisions/0036-promql-as-prometheus.md).
 */
import { DashboardError } from "../errors.js";
import { holtWinters, kahanSumInc, linearRegression, quantile } from "./stats.js";

/** One series' points [lo, hi) in the range (at least one), and the call's other inputs. */
export interface RangePoints {
  readonly times: ArrayLike<number>;
  readonly values: ArrayLike<number>;
  readonly lo: number;
  readonly hi: number;
  /** The range's ends, ms: [start, end]. */
  readonly startMs: number;
  readonly endMs: number;
  /** The step's time (predict_linear's intercept). */
  readonly stepMs: number;
  /** The call's scalar arguments, in order. */
  readonly scalars: readonly number[];
}

type RangeFn = (p: RangePoints) => number | undefined;

/** Prometheus's `aggrOverTime` functions and the others over one series' points. */
export const RANGE_FUNCTIONS: Readonly<Record<string, RangeFn>> = {
  sum_over_time: (p) => {
    let sum = 0;
    let c = 0;
    for (let i = p.lo; i < p.hi; i++) {
      const v = p.values[i] as number;
      const t = sum + v;
      c += Math.abs(sum) >= Math.abs(v) ? sum - t + v : v - t + sum;
      sum = t;
    }
    return Number.isFinite(sum) ? sum + c : sum;
  },
  count_over_time: (p) => p.hi - p.lo,
  present_over_time: () => 1,
  last_over_time: (p) => p.values[p.hi - 1] as number,
  avg_over_time: avgOverTime,
  max_over_time: (p) => extreme(p, (v, best) => v > best),
  min_over_time: (p) => extreme(p, (v, best) => v < best),
  stddev_over_time: (p) => Math.sqrt(variance(p)),
  stdvar_over_time: variance,
  quantile_over_time: (p) => quantile(p.scalars[0] as number, Array.from(slice(p.values, p.lo, p.hi))),
  changes: (p) => countPairs(p, (prev, cur) => cur !== prev && !(Number.isNaN(cur) && Number.isNaN(prev))),
  resets: (p) => countPairs(p, (prev, cur) => cur < prev),
  delta: extrapolatedDelta,
  idelta: (p) => (p.hi - p.lo < 2 ? undefined : (p.values[p.hi - 1] as number) - (p.values[p.hi - 2] as number)),
  deriv: (p) =>
    p.hi - p.lo < 2 ? undefined : linearRegression(p.times, p.values, p.lo, p.hi, p.times[p.lo] as number)[0],
  predict_linear: (p) => {
    if (p.hi - p.lo < 2) return undefined;
    const [slope, intercept] = linearRegression(p.times, p.values, p.lo, p.hi, p.stepMs);
    return slope * (p.scalars[0] as number) + intercept;
  },
  holt_winters: (p) => {
    const [sf, tf] = p.scalars as [number, number];
    if (!(sf > 0 && sf < 1)) throw execution(`invalid smoothing factor. Expected: 0 < sf < 1, got: ${goF(sf)}`);
    if (!(tf > 0 && tf < 1)) throw execution(`invalid trend factor. Expected: 0 < tf < 1, got: ${goF(tf)}`);
    return holtWinters(p.values, p.lo, p.hi, sf, tf);
  },
};

function slice(values: ArrayLike<number>, lo: number, hi: number): ArrayLike<number> {
  return values instanceof Float64Array ? values.subarray(lo, hi) : Array.prototype.slice.call(values, lo, hi);
}

/** The running mean of functions.go, which keeps an infinite mean instead of turning it into NaN. */
function avgOverTime(p: RangePoints): number {
  let mean = 0;
  let count = 0;
  let c = 0;
  for (let i = p.lo; i < p.hi; i++) {
    const v = p.values[i] as number;
    count++;
    if (!Number.isFinite(mean) && !Number.isNaN(mean)) {
      if (!Number.isFinite(v) && !Number.isNaN(v) && mean > 0 === v > 0) continue;
      if (Number.isFinite(v)) continue;
    }
    const inc = v / count - mean / count;
    const t = mean + inc;
    c += Math.abs(mean) >= Math.abs(inc) ? mean - t + inc : inc - t + mean;
    mean = t;
  }
  return !Number.isFinite(mean) && !Number.isNaN(mean) ? mean : mean + c;
}

function extreme(p: RangePoints, better: (v: number, best: number) => boolean): number {
  let best = p.values[p.lo] as number;
  for (let i = p.lo; i < p.hi; i++) {
    const v = p.values[i] as number;
    if (better(v, best) || Number.isNaN(best)) best = v;
  }
  return best;
}

/** Welford's running variance with Kahan-compensated mean and sum of squares, as stdvar_over_time. */
function variance(p: RangePoints): number {
  let count = 0;
  let mean = 0;
  let cMean = 0;
  let aux = 0;
  let cAux = 0;
  for (let i = p.lo; i < p.hi; i++) {
    const v = p.values[i] as number;
    count++;
    const delta = v - (mean + cMean);
    [mean, cMean] = kahanSumInc(delta / count, mean, cMean);
    [aux, cAux] = kahanSumInc(delta * (v - (mean + cMean)), aux, cAux);
  }
  return (aux + cAux) / count;
}

function countPairs(p: RangePoints, counts: (prev: number, cur: number) => boolean): number {
  let n = 0;
  for (let i = p.lo + 1; i < p.hi; i++) if (counts(p.values[i - 1] as number, p.values[i] as number)) n++;
  return n;
}

/** `delta`: Prometheus's extrapolatedRate for a gauge (no counter resets, no zero clamp, not per second). */
function extrapolatedDelta(p: RangePoints): number | undefined {
  const n = p.hi - p.lo;
  if (n < 2) return undefined;
  const firstT = p.times[p.lo] as number;
  const lastT = p.times[p.hi - 1] as number;
  const result = (p.values[p.hi - 1] as number) - (p.values[p.lo] as number);
  const durationToStart = (firstT - p.startMs) / 1000;
  const durationToEnd = (p.endMs - lastT) / 1000;
  const sampledInterval = (lastT - firstT) / 1000;
  const averageBetween = sampledInterval / (n - 1);
  const threshold = averageBetween * 1.1;
  let extrapolateTo = sampledInterval;
  extrapolateTo += durationToStart < threshold ? durationToStart : averageBetween / 2;
  extrapolateTo += durationToEnd < threshold ? durationToEnd : averageBetween / 2;
  return result * (extrapolateTo / sampledInterval);
}

/** Go's %f: six decimals. */
function goF(v: number): string {
  return Number.isFinite(v) ? v.toFixed(6) : Number.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
}

export function execution(message: string): DashboardError {
  return new DashboardError("TM_PROMQL_EXECUTION", message);
}
