/**
 * Measured bias (docs/semantics.md, "Measured bias"): when both the reference and a policy's final
 * have closed a window, the policy's final values are compared with the reference's; the policy's
 * bias is the mean over its last N such windows.
 */
import type { PaneBias } from "../protocol.js";

/** What bias compares of a value: count, errors, p99, distinct users. */
export interface BiasPoint {
  count: number;
  errors: number;
  p99: number;
  users: number;
}

export interface BiasSample {
  countPct: number | null;
  errorRatePp: number | null;
  p99Pct: number | null;
  usersPct: number | null;
}

export function biasPoint(v: BiasPoint): BiasPoint {
  return { count: v.count, errors: v.errors, p99: v.p99, users: v.users };
}

/**
 * Compares a policy's finals with the reference, summed over the service-level keys. Users are the
 * services' distinct-user estimates summed like counts (a user seen in two services counts twice on
 * both sides), so `usersPct` is the shortfall of that sum, positive when the policy under-counts.
 */
export function measureBias(
  ref: ReadonlyMap<string, BiasPoint>,
  finalOf: (service: string) => BiasPoint | null,
): BiasSample {
  let refCount = 0;
  let refErrors = 0;
  let count = 0;
  let errors = 0;
  let p99Sum = 0;
  let p99N = 0;
  let refUsers = 0;
  let users = 0;
  for (const [service, r] of ref) {
    const v = finalOf(service);
    refCount += r.count;
    refErrors += r.errors;
    refUsers += r.users;
    if (v === null) continue;
    count += v.count;
    errors += v.errors;
    users += v.users;
    if (r.p99 > 0 && v.count > 0) {
      p99Sum += (100 * (v.p99 - r.p99)) / r.p99;
      p99N++;
    }
  }
  return {
    countPct: refCount > 0 ? (100 * (refCount - count)) / refCount : null,
    errorRatePp: refCount > 0 && count > 0 ? 100 * (errors / count - refErrors / refCount) : null,
    p99Pct: p99N > 0 ? p99Sum / p99N : null,
    usersPct: refUsers > 0 ? (100 * (refUsers - users)) / refUsers : null,
  };
}

/** Rolling means over the last `size` samples. */
export class BiasTracker {
  readonly samples: BiasSample[] = [];
  private cached: PaneBias | null = null;

  constructor(private readonly size: number) {}

  push(s: BiasSample): void {
    this.samples.push(s);
    if (this.samples.length > this.size) this.samples.shift();
    this.cached = null;
  }

  current(): PaneBias {
    if (this.cached) return this.cached;
    const mean = (pick: (s: BiasSample) => number | null): number | null => {
      let sum = 0;
      let n = 0;
      for (const s of this.samples) {
        const v = pick(s);
        if (v !== null) {
          sum += v;
          n++;
        }
      }
      return n === 0 ? null : sum / n;
    };
    this.cached = Object.freeze({
      countPct: mean((s) => s.countPct),
      errorRatePp: mean((s) => s.errorRatePp),
      p99Pct: mean((s) => s.p99Pct),
      usersPct: mean((s) => s.usersPct),
      windows: this.samples.length,
    });
    return this.cached;
  }
}
