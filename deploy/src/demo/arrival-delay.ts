/**
 * The seed's arrival-delay mixture (Block 1): most events arrive within seconds (exponential
 * around 2 s), a tail of 8 % arrives up to 90 s late (mobile clients reconnecting, retries).
 * Pure.
 */
import type { Prng } from "./prng.js";

export interface DelayMixture {
  /** Mean of the exponential head, ms. */
  headMeanMs: number;
  /** Share of events in the late tail. */
  tailShare: number;
  /** The tail is uniform in [tailMinMs, tailMaxMs]. */
  tailMinMs: number;
  tailMaxMs: number;
}

export const SEED_DELAY_MIXTURE: DelayMixture = {
  headMeanMs: 2000,
  tailShare: 0.08,
  tailMinMs: 5000,
  tailMaxMs: 90_000,
};

/** Arrival delay in ms: the tail with probability tailShare, else the exponential head. */
export function sampleDelay(m: DelayMixture, rng: Prng): number {
  if (rng.chance(m.tailShare)) return rng.uniform(m.tailMinMs, m.tailMaxMs);
  return Math.min(rng.exponential(m.headMeanMs), m.tailMaxMs);
}

/**
 * "Late" for the demo: arriving at least `tailMinMs` (5 s) after it happened — the whole tail
 * and the head's own long delays (~8 % of it). Past every default policy's on-time lag but
 * alerting's, so the dashboard policy drops nearly all of them. `--corr` acts on these.
 */
export function isLate(m: DelayMixture, delayMs: number): boolean {
  return delayMs >= m.tailMinMs;
}
