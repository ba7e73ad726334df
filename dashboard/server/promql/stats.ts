/**
 * Prometheus 2.42's numeric helpers, ported so results agree to the last bit where the order of
 * operations allows (promql/functions.go, promql/quantile.go): Kahan–Neumaier sums, φ-quantiles
 * with linear interpolation, least-squares regression, Holt–Winters smoothing.
 */

/** One step of Kahan–Neumaier summation: [new sum, new compensation]. */
export function kahanSumInc(inc: number, sum: number, c: number): [number, number] {
  const t = sum + inc;
  if (Math.abs(sum) >= Math.abs(inc)) c += sum - t + inc;
  else c += inc - t + sum;
  return [t, c];
}

/** Kahan–Babuška summation, as Prometheus sums (a sum that reached ±Inf stays it). */
export function kahanSum(values: ArrayLike<number>, lo = 0, hi = values.length): number {
  let sum = 0;
  let c = 0;
  for (let i = lo; i < hi; i++) [sum, c] = kahanSumInc(values[i] as number, sum, c);
  return Number.isFinite(sum) ? sum + c : sum;
}

/** The φ-quantile of values (sorted here, NaN first as Go's sort puts them), interpolated linearly. */
export function quantile(q: number, values: number[]): number {
  if (values.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  values.sort((a, b) => (Number.isNaN(a) ? (Number.isNaN(b) ? 0 : -1) : Number.isNaN(b) ? 1 : a - b));
  const n = values.length;
  const rank = q * (n - 1);
  const lower = Math.max(0, Math.floor(rank));
  const upper = Math.min(n - 1, lower + 1);
  const weight = rank - Math.floor(rank);
  return (values[lower] as number) * (1 - weight) + (values[upper] as number) * weight;
}

/** Least-squares slope per second and the intercept at `interceptMs`, of points [lo, hi). */
export function linearRegression(
  times: ArrayLike<number>,
  values: ArrayLike<number>,
  lo: number,
  hi: number,
  interceptMs: number,
): [number, number] {
  let n = 0;
  let sumX = 0;
  let cX = 0;
  let sumY = 0;
  let cY = 0;
  let sumXY = 0;
  let cXY = 0;
  let sumX2 = 0;
  let cX2 = 0;
  const initY = values[lo] as number;
  let constY = true;
  for (let i = lo; i < hi; i++) {
    const v = values[i] as number;
    if (constY && i > lo && v !== initY) constY = false;
    n += 1;
    const x = ((times[i] as number) - interceptMs) / 1e3;
    [sumX, cX] = kahanSumInc(x, sumX, cX);
    [sumY, cY] = kahanSumInc(v, sumY, cY);
    [sumXY, cXY] = kahanSumInc(x * v, sumXY, cXY);
    [sumX2, cX2] = kahanSumInc(x * x, sumX2, cX2);
  }
  if (constY) return Number.isFinite(initY) || Number.isNaN(initY) ? [0, initY] : [NaN, NaN];
  sumX += cX;
  sumY += cY;
  sumXY += cXY;
  sumX2 += cX2;
  const covXY = sumXY - (sumX * sumY) / n;
  const varX = sumX2 - (sumX * sumX) / n;
  const slope = covXY / varX;
  return [slope, sumY / n - (slope * sumX) / n];
}

/** Double exponential smoothing with factors sf and tf (both in (0, 1)); undefined under two points. */
export function holtWinters(
  values: ArrayLike<number>,
  lo: number,
  hi: number,
  sf: number,
  tf: number,
): number | undefined {
  if (hi - lo < 2) return undefined;
  let s0 = 0;
  let s1 = values[lo] as number;
  let b = (values[lo + 1] as number) - s1;
  for (let i = 1; i < hi - lo; i++) {
    const x = sf * (values[lo + i] as number);
    b = i - 1 === 0 ? b : tf * (s1 - s0) + (1 - tf) * b;
    const y = (1 - sf) * (s1 + b);
    s0 = s1;
    s1 = x + y;
  }
  return s1;
}
