/**
 * Measured bias (docs/semantics.md, "Measured bias"): when the reference has closed a window, the
 * value a policy showed at a pane kind is compared with the reference's; a tracker keeps the last N
 * such samples and gives their mean with a 95 % interval (Student t, n − 1 degrees of freedom).
 */
import type { AgeBucket, BiasSpread, BiasStage, PaneBias } from "../../protocol.js";
import { studentT975 } from "./student-t.js";

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
 * Compares a policy's values with the reference, summed over the service-level keys of `ref`
 * (`valueOf` null: the policy showed nothing for the service). Users are the services'
 * distinct-user estimates summed like counts (a user seen in two services counts twice on both
 * sides), so `usersPct` is the shortfall of that sum, positive when the policy under-counts.
 */
export function measureBias(
  ref: ReadonlyMap<string, BiasPoint>,
  valueOf: (service: string) => BiasPoint | null,
): BiasSample {
  const sum = new PooledSum();
  for (const [service, r] of ref) sum.add(r, valueOf(service));
  return sum.sample();
}

/**
 * Reference and compared totals summed over services: a pooled comparison (PooledSum) or the
 * nowcasts' (NowcastSum, nowcast.ts). Counts, errors and users are summed like counts; p99 is the
 * mean of the services' relative differences.
 */
export abstract class ComparisonSums {
  refCount = 0;
  refErrors = 0;
  refUsers = 0;
  count = 0;
  errors = 0;
  users = 0;
  p99Sum = 0;
  p99N = 0;
  services = 0;

  protected addReference(r: BiasPoint): void {
    this.services++;
    this.refCount += r.count;
    this.refErrors += r.errors;
    this.refUsers += r.users;
  }

  /** `p99` null: the compared value has no latency to compare. */
  protected addCompared(r: BiasPoint, count: number, errors: number, users: number, p99: number | null): void {
    this.count += count;
    this.errors += errors;
    this.users += users;
    if (r.p99 > 0 && p99 !== null) {
      this.p99Sum += (100 * (p99 - r.p99)) / r.p99;
      this.p99N++;
    }
  }

  /** countPct and usersPct as the shortfall (reference − compared) or the excess (compared − reference). */
  protected figures(shortfall: boolean): BiasSample {
    const { refCount, refErrors, refUsers, count, errors, users } = this;
    const pct = (ref: number, v: number): number | null =>
      ref > 0 ? (100 * (shortfall ? ref - v : v - ref)) / ref : null;
    return {
      countPct: pct(refCount, count),
      errorRatePp: refCount > 0 && count > 0 ? 100 * (errors / count - refErrors / refCount) : null,
      p99Pct: this.p99N > 0 ? this.p99Sum / this.p99N : null,
      usersPct: pct(refUsers, users),
    };
  }

  reset(): void {
    this.refCount = this.refErrors = this.refUsers = this.count = this.errors = this.users = 0;
    this.p99Sum = this.p99N = this.services = 0;
  }
}

/** A pooled comparison built up service by service (measureBias without the map). */
export class PooledSum extends ComparisonSums {
  add(r: BiasPoint, v: BiasPoint | null): void {
    this.addReference(r);
    if (v !== null) this.addCompared(r, v.count, v.errors, v.users, v.count > 0 ? v.p99 : null);
  }

  sample(): BiasSample {
    return this.figures(true);
  }
}

/** What a tracker's figures are of (docs/websocket-protocol.md, "Bias on screen"). */
export interface BiasLabel {
  readonly stage: BiasStage;
  readonly age?: AgeBucket;
  readonly scope: "service" | "policy";
  readonly provisional: boolean;
}

/** Means of the last samples with their interval half-widths (null: fewer than two samples). */
export interface BiasSummary extends BiasSample {
  windows: number;
  spread: BiasSpread;
}

const FIELDS = 4;
const NO_SPREAD: BiasSpread = Object.freeze({ countPct: null, errorRatePp: null, p99Pct: null, usersPct: null });

/** A bias that nothing measured yet, labelled with what it would be of. */
export function unmeasured(label: BiasLabel): PaneBias {
  return Object.freeze({
    countPct: null,
    errorRatePp: null,
    p99Pct: null,
    usersPct: null,
    windows: 0,
    spread: NO_SPREAD,
    ...labelFields(label),
  });
}

function labelFields(label: BiasLabel): Pick<PaneBias, "stage" | "age" | "scope" | "provisional"> {
  return label.age === undefined
    ? { stage: label.stage, scope: label.scope, provisional: label.provisional }
    : { stage: label.stage, age: label.age, scope: label.scope, provisional: label.provisional };
}

/**
 * The last `size` samples in a ring (4 numbers each, NaN for null; room for 4, doubling up to `size`)
 * and their summary, cached until the next push.
 */
export class BiasTracker {
  private ring: Float64Array | null = null;
  private n = 0;
  private next = 0;
  private summaryCache: BiasSummary | null = null;
  private biasCache: PaneBias | null = null;

  constructor(
    readonly size: number,
    readonly label: BiasLabel,
  ) {}

  get windows(): number {
    return this.n;
  }

  push(s: BiasSample): void {
    if (this.ring === null || (this.n === this.ring.length / FIELDS && this.n < this.size)) this.grow();
    const ring = this.ring as Float64Array;
    const capacity = ring.length / FIELDS;
    const at = FIELDS * this.next;
    ring[at] = s.countPct ?? NaN;
    ring[at + 1] = s.errorRatePp ?? NaN;
    ring[at + 2] = s.p99Pct ?? NaN;
    ring[at + 3] = s.usersPct ?? NaN;
    this.next = (this.next + 1) % capacity;
    if (this.n < capacity) this.n++;
    this.summaryCache = null;
    this.biasCache = null;
  }

  /** Room for more samples: 4 at first, doubling up to `size` (the held ones linearized, oldest first). */
  private grow(): void {
    const old = this.ring;
    const capacity = Math.min(this.size, old === null ? 4 : (2 * old.length) / FIELDS);
    const ring = new Float64Array(FIELDS * capacity);
    if (old !== null) {
      const held = old.length / FIELDS;
      const first = (this.next - this.n + held) % held;
      for (let k = 0; k < this.n; k++)
        ring.set(old.subarray(FIELDS * ((first + k) % held), FIELDS * ((first + k) % held) + FIELDS), FIELDS * k);
    }
    this.ring = ring;
    this.next = this.n % capacity;
  }

  /** Forgets every sample. */
  clear(): void {
    this.n = 0;
    this.next = 0;
    this.summaryCache = null;
    this.biasCache = null;
  }

  /** The samples, oldest first (snapshots and tests). */
  samples(): BiasSample[] {
    const out: BiasSample[] = [];
    const ring = this.ring;
    if (ring === null) return out;
    const capacity = ring.length / FIELDS;
    const first = (this.next - this.n + capacity) % capacity;
    for (let k = 0; k < this.n; k++) {
      const at = FIELDS * ((first + k) % capacity);
      out.push({
        countPct: orNull(ring[at] as number),
        errorRatePp: orNull(ring[at + 1] as number),
        p99Pct: orNull(ring[at + 2] as number),
        usersPct: orNull(ring[at + 3] as number),
      });
    }
    return out;
  }

  summary(): BiasSummary {
    if (this.summaryCache !== null) return this.summaryCache;
    const means: (number | null)[] = [];
    const spreads: (number | null)[] = [];
    for (let f = 0; f < FIELDS; f++) {
      const [mean, spread] = this.field(f);
      means.push(mean);
      spreads.push(spread);
    }
    const [countPct, errorRatePp, p99Pct, usersPct] = means as [
      number | null,
      number | null,
      number | null,
      number | null,
    ];
    const spread: BiasSpread =
      this.n < 2
        ? NO_SPREAD
        : Object.freeze({
            countPct: spreads[0] as number | null,
            errorRatePp: spreads[1] as number | null,
            p99Pct: spreads[2] as number | null,
            usersPct: spreads[3] as number | null,
          });
    return (this.summaryCache = Object.freeze({ countPct, errorRatePp, p99Pct, usersPct, windows: this.n, spread }));
  }

  /** The summary as a pane's bias, labelled (one frozen object until the next push). */
  current(): PaneBias {
    if (this.biasCache !== null) return this.biasCache;
    const s = this.summary();
    return (this.biasCache = Object.freeze({
      countPct: s.countPct,
      errorRatePp: s.errorRatePp,
      p99Pct: s.p99Pct,
      usersPct: s.usersPct,
      windows: s.windows,
      spread: s.spread,
      ...labelFields(this.label),
    }));
  }

  /**
   * Mean and 95 % half-width of field f over the held samples that measured it, summed oldest
   * first (so a tracker restored from its samples gives the same bits).
   */
  private field(f: number): [number | null, number | null] {
    const ring = this.ring;
    if (ring === null || this.n === 0) return [null, null];
    const capacity = ring.length / FIELDS;
    const first = (this.next - this.n + capacity) % capacity;
    let sum = 0;
    let k = 0;
    for (let i = 0; i < this.n; i++) {
      const v = ring[FIELDS * ((first + i) % capacity) + f] as number;
      if (v === v) {
        sum += v;
        k++;
      }
    }
    if (k === 0) return [null, null];
    const mean = sum / k;
    if (k < 2) return [mean, null];
    let ss = 0;
    for (let i = 0; i < this.n; i++) {
      const v = ring[FIELDS * ((first + i) % capacity) + f] as number;
      if (v === v) ss += (v - mean) * (v - mean);
    }
    return [mean, (studentT975(k - 1) * Math.sqrt(ss / (k - 1))) / Math.sqrt(k)];
  }
}

function orNull(v: number): number | null {
  return Number.isNaN(v) ? null : v;
}
