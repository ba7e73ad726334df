/**
 * Burn rates and their verdicts (docs/slo.md, "Burn rates"): a window's burn rate is its error
 * ratio over the error budget (1 − objective), raw and corrected by the nowcast, with the 95 %
 * interval of the corrected one. The bias of a window's panes is systematic, not independent:
 * the interval's half-width is the count-weighted mean of the panes' half-widths (no √n shrink).
 */
import type { Counts } from "./slo-cells.js";
import type { SloDefinition, SloTier } from "./slo-config.js";

export interface WindowBurn {
  readonly windowMs: number;
  /** Requests counted (raw) in the window. */
  readonly requests: number;
  readonly raw: number;
  readonly corrected: number;
  /** Half-width of the corrected burn rate's 95 % interval; null when some pane's bias is unmeasured. */
  readonly halfWidth: number | null;
  /** Count-weighted mean measured error-rate bias of the window's panes (pp, policy − reference), null when none. */
  readonly biasPp: number | null;
}

export interface TierVerdict {
  readonly tier: SloTier;
  readonly long: WindowBurn;
  readonly short: WindowBurn;
  /** The long window carries at least minRequestsPerHour. */
  readonly floorMet: boolean;
  /** Corrected burn rates above the factor in both windows, the floor met. */
  readonly crossed: boolean;
  /** The interval of either window reaches the other side of the factor. */
  readonly mayFlip: boolean;
  /** Some pane's bias is unmeasured: the raw value stands in for it (provisional). */
  readonly provisional: boolean;
}

/** The burn rate of a window's totals. */
export function windowBurn(c: Counts, windowMs: number, objective: number): WindowBurn {
  const budget = 1 - objective;
  const raw = c.count > 0 ? c.errors / c.count / budget : 0;
  const corrected = c.corrCount > 0 ? c.corrErrors / c.corrCount / budget : raw;
  const halfWidth = c.unmeasured > 0 || c.corrCount === 0 ? null : c.spreadWeight / c.corrCount / budget;
  return {
    windowMs,
    requests: c.count,
    raw,
    corrected,
    halfWidth,
    biasPp: c.biasCount > 0 ? c.biasWeight / c.biasCount : null,
  };
}

/** The tier's verdict from its two windows. */
export function tierVerdict(slo: SloDefinition, tier: SloTier, long: WindowBurn, short: WindowBurn): TierVerdict {
  const floorMet = long.requests >= (slo.minRequestsPerHour * tier.longMs) / 3_600_000;
  const crossed = floorMet && long.corrected > tier.factor && short.corrected > tier.factor;
  const straddles = (w: WindowBurn): boolean =>
    w.halfWidth !== null && w.corrected - w.halfWidth <= tier.factor && w.corrected + w.halfWidth > tier.factor;
  const reaches = (w: WindowBurn): boolean => w.halfWidth !== null && w.corrected + w.halfWidth > tier.factor;
  const mayFlip = floorMet && (crossed ? straddles(long) || straddles(short) : reaches(long) && reaches(short));
  return {
    tier,
    long,
    short,
    floorMet,
    crossed,
    mayFlip,
    provisional: long.halfWidth === null || short.halfWidth === null,
  };
}

export interface Budget {
  /** 1 − (error ratio over the period) / (1 − objective), corrected; below 0 when overspent. */
  readonly remaining: number;
  readonly remainingRaw: number;
  /** Half-width of the remaining budget's interval; null when unmeasured. */
  readonly halfWidth: number | null;
  /** Period time until the budget is spent at the burn rate given (ms); Infinity when not burning. */
  readonly exhaustionMs: number;
}

/** The error budget left over the period's totals, and when it runs out at `burnRate`. */
export function budgetOf(c: Counts, slo: SloDefinition, burnRate: number): Budget {
  const b = windowBurn(c, slo.periodMs, slo.objective);
  const remaining = 1 - b.corrected;
  const exhaustionMs = remaining <= 0 ? 0 : burnRate > 0 ? (remaining * slo.periodMs) / burnRate : Infinity;
  return { remaining, remainingRaw: 1 - b.raw, halfWidth: b.halfWidth, exhaustionMs };
}
