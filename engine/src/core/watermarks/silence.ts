/**
 * Silence: the one rule by which tidemark judges progress on the wall clock
 * (docs/decisions/0045-operator-host.md, "Progress"): a source not heard of for `timeoutMs` of the
 * caller's clock is silent. The merge stage's tick aligner leaves a silent partition out of the
 * merged watermark (idleness, as Flink's `withIdleness`), the merge operator leaves it out of a
 * checkpoint's alignment, and the stall watch names a partition the partition interleave has waited on
 * for long. Decisions in log time are the input driver's (input-driver.ts), never made here.
 *
 * Pure: times are arguments.
 */

/** True when a source last heard of at `heardAt` is silent at `now` after `timeoutMs`. */
export function silentSince(heardAt: number, now: number, timeoutMs: number): boolean {
  return now - heardAt >= timeoutMs;
}

/** When each of `n` sources was last heard of, on the caller's clock. */
export class Silence {
  private readonly heardAt: Float64Array;

  constructor(n: number, now: number) {
    this.heardAt = new Float64Array(n).fill(now);
  }

  /** Source `i` was heard of at `now` (out of range: ignored). */
  heard(i: number, now: number): void {
    if (i < this.heardAt.length) this.heardAt[i] = now;
  }

  /** Source `i` silent at `now` for `timeoutMs` (out of range: never). */
  silent(i: number, now: number, timeoutMs: number): boolean {
    const at = this.heardAt[i];
    return at !== undefined && silentSince(at, now, timeoutMs);
  }

  /** Every source counts as heard of at `now` (a reconnect: silence while disconnected was ours). */
  restart(now: number): void {
    this.heardAt.fill(now);
  }
}
