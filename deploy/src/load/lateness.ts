/**
 * When `tidemark load`'s events arrive (docs/operations.md, "`tidemark load`", "Traffic model"):
 * the seed's shape on a load test's time scale — 92 % within about a second of their event time
 * (exponential around 200 ms), 8 % uniformly 1–30 s late — and, with `--corr X`, late events
 * failing more often. Uses the demo's delay mixture (demo/arrival-delay.ts). Pure.
 */
import type { DelayMixture } from "../demo/arrival-delay.js";

export const LOAD_DELAYS: DelayMixture = {
  headMeanMs: 200,
  tailShare: 0.08,
  tailMinMs: 1000,
  tailMaxMs: 30_000,
};

/** The error probability of an event: `corr` more when it is late (at most 1). */
export function errorProbability(normal: number, late: boolean, corr: number): number {
  return late ? Math.min(1, normal + corr) : normal;
}
