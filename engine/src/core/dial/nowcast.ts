/**
 * The nowcast (docs/semantics.md, "Nowcast"): what the reference will likely say of a pane's
 * window, from the value corrected by the bias measured at the pane's kind and age — count /
 * (1 − countPct/100), error rate − errorRatePp/100, p99 / (1 + p99Pct/100), users / (1 −
 * usersPct/100), clamped to sane ranges — with 95 % half-widths from the bias spreads (delta
 * method) and the nowcast's own measured error (nowcast − reference) at that kind and age.
 */
import type { BiasSpread, PaneBias, PaneNowcast, PaneValue } from "../../protocol.js";
import { ComparisonSums, type BiasPoint, type BiasSample } from "./bias.js";
import type { NowcastValue } from "../panes/kind-points.js";

/** A correction factor (completeness, or 1 + relative error) kept within [1/100, 100]. */
function factor(x: number): number {
  return Math.min(100, Math.max(0.01, x));
}

/** The nowcast's measured error as a pane carries it. */
export type NowcastError = PaneNowcast["error"];

const NO_SPREAD: BiasSpread = Object.freeze({ countPct: null, errorRatePp: null, p99Pct: null, usersPct: null });

/** The error of nowcasts nothing has measured yet. */
export const UNMEASURED_ERROR: NowcastError = Object.freeze({
  countPct: null,
  errorRatePp: null,
  p99Pct: null,
  usersPct: null,
  windows: 0,
  spread: NO_SPREAD,
});

/** The pane's nowcast, or null when its bias measures nothing yet. */
export function nowcastOf(v: PaneValue, b: PaneBias, error: NowcastError): PaneNowcast | null {
  if (b.windows === 0) return null;
  const spread = b.spread ?? NO_SPREAD;
  const completeness = b.countPct === null ? 1 : factor(1 - b.countPct / 100);
  const usersCompleteness = b.usersPct === null ? 1 : factor(1 - b.usersPct / 100);
  const p99Factor = b.p99Pct === null ? 1 : factor(1 + b.p99Pct / 100);
  const errorShift = b.errorRatePp === null ? 0 : b.errorRatePp / 100;
  const count = v.count / completeness;
  const users = v.users / usersCompleteness;
  const p99 = v.p99 / p99Factor;
  // d/dx of value / (1 − x/100) is value / (100 (1 − x/100)²): the half-width of x carried over.
  const over = (value: number, f: number, x: number | null, s: number | null): number | null =>
    x === null || s === null ? null : (value * s) / (100 * f * f);
  return {
    value: { count, errorRate: Math.min(1, Math.max(0, v.errorRate - errorShift)), p99, users },
    spread: {
      count: over(v.count, completeness, b.countPct, spread.countPct),
      errorRate: b.errorRatePp === null || spread.errorRatePp === null ? null : spread.errorRatePp / 100,
      p99: over(v.p99, p99Factor, b.p99Pct, spread.p99Pct),
      users: over(v.users, usersCompleteness, b.usersPct, spread.usersPct),
    },
    error,
  };
}

/** One service's nowcast against the reference, signed nowcast − reference (% of it, or pp). */
export function nowcastError(r: BiasPoint, nc: NowcastValue): BiasSample {
  return {
    countPct: r.count > 0 ? (100 * (nc.count - r.count)) / r.count : null,
    errorRatePp: r.count > 0 ? 100 * (nc.errorRate - r.errors / r.count) : null,
    p99Pct: r.p99 > 0 ? (100 * (nc.p99 - r.p99)) / r.p99 : null,
    usersPct: r.users > 0 ? (100 * (nc.users - r.users)) / r.users : null,
  };
}

/** The nowcasts of several services against the reference, summed like counts (nowcastError pooled). */
export class NowcastSum extends ComparisonSums {
  add(r: BiasPoint, nc: NowcastValue): void {
    this.addReference(r);
    this.addCompared(r, nc.count, nc.errorRate * nc.count, nc.users, nc.p99);
  }

  /** Signed nowcast − reference for every field. */
  sample(): BiasSample {
    return this.figures(false);
  }
}
