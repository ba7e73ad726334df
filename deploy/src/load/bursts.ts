/**
 * Error bursts per service (docs/operations.md, "`tidemark load`", "Traffic model"): now and
 * then a service fails ~20 % of its requests for a few seconds. Each service's bursts are a
 * Poisson process of their own, drawn from its own generator, so the schedule depends on the seed
 * alone, not on the traffic. Pure: asked in non-decreasing time per service.
 */
import { Prng } from "../demo/prng.js";

export interface BurstShape {
  /** Mean time between the end of one burst of a service and the start of its next, ms. */
  meanGapMs: number;
  minMs: number;
  maxMs: number;
  /** The error rate during a burst is uniform in [minErrorRate, maxErrorRate]. */
  minErrorRate: number;
  maxErrorRate: number;
}

export const LOAD_BURSTS: BurstShape = {
  meanGapMs: 90_000,
  minMs: 2000,
  maxMs: 6000,
  minErrorRate: 0.15,
  maxErrorRate: 0.25,
};

interface Burst {
  start: number;
  end: number;
  errorRate: number;
}

export class ErrorBursts {
  private readonly current: Burst[];
  private readonly rngs: Prng[];

  constructor(
    services: number,
    seed: number,
    startMs: number,
    private readonly shape: BurstShape = LOAD_BURSTS,
  ) {
    this.rngs = Array.from({ length: services }, (_, i) => new Prng((seed ^ 0xb0a5_7000) + i));
    this.current = this.rngs.map((rng) => this.draw(rng, startMs + rng.exponential(shape.meanGapMs)));
  }

  /** The burst error rate of `service` at `ts`, or 0 outside a burst. */
  errorRateAt(service: number, ts: number): number {
    let b = this.current[service] as Burst;
    while (ts >= b.end) {
      const rng = this.rngs[service] as Prng;
      b = this.draw(rng, b.end + rng.exponential(this.shape.meanGapMs));
      this.current[service] = b;
    }
    return ts >= b.start ? b.errorRate : 0;
  }

  private draw(rng: Prng, start: number): Burst {
    const s = this.shape;
    return {
      start,
      end: start + rng.uniform(s.minMs, s.maxMs),
      errorRate: rng.uniform(s.minErrorRate, s.maxErrorRate),
    };
  }
}
