/**
 * Seeded test and benchmark data: a small PRNG and the latency shapes of the benchmarks.
 * Deterministic so a failing test or a benchmark number can be reproduced.
 */
export type Random = () => number;

/** mulberry32: fast, 32-bit state, good enough for test data. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(rand: Random): number {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export const distributions = {
  /** Typical request latency: median ~50 ms, long right tail. */
  lognormal: (rand: Random) => Math.exp(Math.log(50) + 1 * normal(rand)),
  /** Heavy tail: Pareto with scale 10 ms, shape 1.5. */
  pareto: (rand: Random) => 10 / Math.pow(1 - rand(), 1 / 1.5),
  /** Cache hits around 2 ms and misses around 200 ms. */
  bimodal: (rand: Random) => (rand() < 0.7 ? 2 * Math.exp(0.2 * normal(rand)) : 200 * Math.exp(0.3 * normal(rand))),
  constant: () => 42,
} satisfies Record<string, (rand: Random) => number>;

export type DistributionName = keyof typeof distributions;

export function sample(name: DistributionName, n: number, seed: number): Float64Array {
  const rand = seededRandom(seed);
  const f = distributions[name];
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = f(rand);
  return out;
}

/** Exact lower quantile matching DDSketch's rank q·(n−1) (the element at floor of it). */
export function exactQuantile(sorted: Float64Array, q: number): number {
  return sorted[Math.floor(q * (sorted.length - 1))] as number;
}
