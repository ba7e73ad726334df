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

export const SEED_DELAY_MIXTURE: DelayMixture = { headMeanMs: 2000, tailShare: 0.08, tailMinMs: 5000, tailMaxMs: 90_000 };

export interface ArrivalDelay {
  delayMs: number;
  /** True for the late tail (the events `--corr` makes fail more often). */
  tail: boolean;
}

export function sampleDelay(m: DelayMixture, rng: Prng): ArrivalDelay {
  if (rng.chance(m.tailShare)) return { delayMs: rng.uniform(m.tailMinMs, m.tailMaxMs), tail: true };
  return { delayMs: Math.min(rng.exponential(m.headMeanMs), m.tailMaxMs), tail: false };
}
