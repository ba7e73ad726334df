/**
 * Test support: an independent brute-force oracle of measured bias and emit delay
 * (docs/semantics.md, "Late data" and "Measured bias") for arrival-lag policies in final-only mode
 * over tumbling windows, computed from the raw events alone (no aggregate, sketch or core code).
 *
 * Events must be in arrival order with non-decreasing `ingest_ts`, so log time at an event's
 * arrival is its own `ingest_ts`. A closer with deadline `D` after a window's end (lag + grace for
 * a policy, the reference horizon for the reference) keeps an event of window `[s, e)` iff
 * `ingest_ts < e + D` and closes the window at the first log time `≥ e + D`.
 */
import type { TelemetryEvent } from "../../protocol.js";

export interface ArrivalLagPolicy {
  lagMs: number;
  graceMs: number;
}

/** A value known up to the sketches' documented error: the true value lies in [lo, hi]. */
export interface Interval {
  lo: number;
  hi: number;
}

export interface OracleBias {
  windows: number;
  countPct: number | null;
  errorRatePp: number | null;
  p99Pct: Interval | null;
  usersPct: Interval | null;
}

export interface SketchError {
  /** DDSketch relative accuracy α: a quantile is within α of the element of its rank (ADR 0003). */
  alpha: number;
  /** HyperLogLog relative error of a distinct count at these cardinalities (ADR 0003). */
  hll: number;
}

/** The element of rank ⌊q·(n−1)⌋ of an ascending array (ADR 0003, "Two forms of DDSketch"). */
export function exactQuantile(sorted: readonly number[], q: number): number {
  return sorted[Math.floor(q * (sorted.length - 1))] as number;
}

interface Cell {
  count: number;
  errors: number;
  latencies: number[];
  users: Set<string>;
}

type Cells = Map<string, Cell>;

/** Per window start, per service: what a closer with this deadline keeps. */
function kept(events: readonly TelemetryEvent[], windowMs: number, deadlineMs: number): Map<number, Cells> {
  const out = new Map<number, Cells>();
  for (const e of events) {
    const start = Math.floor(e.ts / windowMs) * windowMs;
    if (e.ingest_ts >= start + windowMs + deadlineMs) continue;
    let cells = out.get(start);
    if (cells === undefined) out.set(start, (cells = new Map()));
    let c = cells.get(e.service);
    if (c === undefined) cells.set(e.service, (c = { count: 0, errors: 0, latencies: [], users: new Set() }));
    c.count++;
    if (e.status >= 500) c.errors++;
    c.latencies.push(e.latency_ms);
    c.users.add(e.user);
  }
  return out;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function meanInterval(xs: readonly Interval[]): Interval | null {
  return xs.length === 0 ? null : { lo: mean(xs.map((x) => x.lo)), hi: mean(xs.map((x) => x.hi)) };
}

/** 100·(a/b − 1) for a, b each known within relative error ε (and an absolute ±abs each). */
function ratioPct(a: number, b: number, eps: number, abs = 0): Interval {
  return {
    lo: 100 * ((a * (1 - eps) - abs) / (b * (1 + eps) + abs) - 1),
    hi: 100 * ((a * (1 + eps) + abs) / (b * (1 - eps) - abs) - 1),
  };
}

interface Sample {
  countPct: number | null;
  errorRatePp: number | null;
  p99Pct: Interval | null;
  usersPct: Interval | null;
}

function sample(ref: Cells, pol: Cells | undefined, err: SketchError): Sample {
  let refCount = 0;
  let refErrors = 0;
  let count = 0;
  let errors = 0;
  let refUsers = 0;
  let users = 0;
  const p99: Interval[] = [];
  for (const [service, r] of ref) {
    refCount += r.count;
    refErrors += r.errors;
    refUsers += r.users.size;
    const v = pol?.get(service);
    if (v === undefined) continue;
    count += v.count;
    errors += v.errors;
    users += v.users.size;
    const rp = exactQuantile(
      [...r.latencies].sort((a, b) => a - b),
      0.99,
    );
    const vp = exactQuantile(
      [...v.latencies].sort((a, b) => a - b),
      0.99,
    );
    p99.push(ratioPct(vp, rp, err.alpha));
  }
  // Each service's users estimate is rounded to an integer: ±0.5 each on top of the HLL error.
  const usersShare = refUsers > 0 ? ratioPct(users, refUsers, err.hll, 0.5 * ref.size) : null;
  return {
    countPct: refCount > 0 ? (100 * (refCount - count)) / refCount : null,
    errorRatePp: refCount > 0 && count > 0 ? 100 * (errors / count - refErrors / refCount) : null,
    p99Pct: meanInterval(p99),
    // usersPct = 100·(1 − users/refUsers) = −(100·(users/refUsers − 1)).
    usersPct: usersShare === null ? null : { lo: -usersShare.hi, hi: -usersShare.lo },
  };
}

/**
 * The policy's bias after the whole recording (no finish()): the mean over the last `biasWindows`
 * windows that both the policy and the reference (horizon `horizonMs`) have closed by the last
 * event's log time.
 */
export function bruteForceBias(
  events: readonly TelemetryEvent[],
  windowMs: number,
  policy: ArrivalLagPolicy,
  horizonMs: number,
  biasWindows: number,
  err: SketchError,
): OracleBias {
  const logTime = events[events.length - 1]?.ingest_ts ?? -Infinity;
  const deadline = policy.lagMs + policy.graceMs;
  const ref = kept(events, windowMs, horizonMs);
  const pol = kept(events, windowMs, deadline);
  const closed = [...ref.keys()]
    .filter((start) => start + windowMs + Math.max(deadline, horizonMs) <= logTime)
    .sort((a, b) => a - b)
    .slice(-biasWindows);
  const samples = closed.map((start) => sample(ref.get(start) as Cells, pol.get(start), err));
  const nums = (pick: (s: Sample) => number | null): number | null => {
    const xs = samples.map(pick).filter((x): x is number => x !== null);
    return xs.length === 0 ? null : mean(xs);
  };
  return {
    windows: samples.length,
    countPct: nums((s) => s.countPct),
    errorRatePp: nums((s) => s.errorRatePp),
    p99Pct: meanInterval(samples.map((s) => s.p99Pct).filter((x): x is Interval => x !== null)),
    usersPct: meanInterval(samples.map((s) => s.usersPct).filter((x): x is Interval => x !== null)),
  };
}

/**
 * Emit delay of each window's final pane (final-only mode): the first log time at or past
 * end + lag + grace, minus the end; only windows whose final fired before the last event.
 */
export function bruteForceEmitDelays(
  events: readonly TelemetryEvent[],
  windowMs: number,
  policy: ArrivalLagPolicy,
): Map<number, number> {
  const deadline = policy.lagMs + policy.graceMs;
  const starts = [...new Set(events.map((e) => Math.floor(e.ts / windowMs) * windowMs))].sort((a, b) => a - b);
  const out = new Map<number, number>();
  for (const start of starts) {
    const end = start + windowMs;
    const firing = events.find((e) => e.ingest_ts >= end + deadline);
    if (firing !== undefined) out.set(start, firing.ingest_ts - end);
  }
  return out;
}
