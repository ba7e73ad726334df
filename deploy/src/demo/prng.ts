/**
 * The demo's random draws: the core's seeded generator (sfc32, the one `tidemark simulate`
 * uses) plus the distributions the demo needs. Pure: the same seed gives the same sequence on
 * every machine.
 */
import { Prng as SeededPrng } from "@tidemark/engine/core";

export class Prng extends SeededPrng {
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Lognormal with the given median and shape sigma: median · e^(sigma·Z). */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new RangeError("pick from an empty list");
    return item;
  }
}
