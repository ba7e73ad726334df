/**
 * The two distributions the honest dial needs (docs/semantics.md, "Measured bias" and "Correlated
 * lateness"): the 97.5 % quantile of Student's t, for the 95 % interval of a mean over n samples
 * (n − 1 degrees of freedom), and the two-sided tail of the standard normal, for the p value of a
 * z statistic. Computed, not tabled: the t CDF from the regularized incomplete beta function
 * (continued fraction, Lentz), its quantile by bisection; the normal tail from erfc (a Chebyshev
 * fit, fractional error below 1.2e-7). Pure and deterministic.
 */

const LANCZOS = [
  76.18009172947146, -86.50532032941678, 24.01409824083091, -1.231739572450155, 0.001208650973866179,
  -0.000005395239384953,
];

/** ln Γ(x), x > 0 (Lanczos). */
function lnGamma(x: number): number {
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.000000000190015;
  for (const c of LANCZOS) ser += c / ++y;
  return -tmp + Math.log((2.5066282746310007 * ser) / x);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
function incompleteBeta(a: number, b: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom, t ≥ 0. */
function studentCdf(t: number, df: number): number {
  return 1 - 0.5 * incompleteBeta(df / 2, 0.5, df / (df + t * t));
}

const T975 = new Map<number, number>();

/** The 97.5 % quantile of Student's t with `df` ≥ 1 degrees of freedom (cached per df). */
export function studentT975(df: number): number {
  const held = T975.get(df);
  if (held !== undefined) return held;
  let lo = 1.959;
  let hi = 12.71;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (studentCdf(mid, df) < 0.975) lo = mid;
    else hi = mid;
  }
  const q = (lo + hi) / 2;
  T975.set(df, q);
  return q;
}

/** erfc(x), x ≥ 0 (Numerical Recipes' Chebyshev fit: fractional error below 1.2e-7). */
function erfc(x: number): number {
  const t = 1 / (1 + 0.5 * x);
  const poly =
    -x * x -
    1.26551223 +
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t *
                  (-0.18628806 +
                    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * Math.exp(poly);
}

/** Two-sided p value of a standard normal statistic: P(|Z| ≥ |z|). */
export function normalTwoSidedP(z: number): number {
  return Math.min(1, erfc(Math.abs(z) / Math.SQRT2));
}
