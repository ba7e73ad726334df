/**
 * One resend sweep of the pane sink (docs/decisions/0035-backpressure.md, "Resends"): of the
 * publishes whose ack timeout has passed, the earliest due go again, at most `bound` of them (in
 * messages and bytes) per sweep, so a stalled stream is never sent its whole window at once; the
 * rest stay due for the next sweep. A resend is attempt k + 1 and waits its own, longer, timeout
 * (publish-backoff.ts).
 *
 * Pure: the clock and the random source are arguments.
 */
import { ackTimeoutMs, type Backoff } from "./publish-backoff.js";
import type { WindowLimits } from "./publish-window.js";

/** What a sweep needs of an unacknowledged publish. */
export interface Resendable {
  /** Attempts sent so far minus one (0 after the first send). */
  attempt: number;
  /** Wall clock when its current attempt times out. */
  dueAt: number;
  bytes: number;
}

/** At most this much goes again per sweep (a sweep every SWEEP_MS). */
export const RESEND_PER_SWEEP: WindowLimits = Object.freeze({ messages: 64, bytes: 8 * 1024 * 1024 });
export const SWEEP_MS = 250;

/** One sweep's counts, for its one log line. */
export interface SweepReport {
  /** Sent again now. */
  resent: number;
  resentBytes: number;
  /** Due but left for a later sweep (over the per-sweep bound, or the server not reading). */
  deferred: number;
  /** The highest attempt number among those sent again. */
  maxAttempt: number;
  /** How long the oldest of them had been due, ms. */
  oldestDueMs: number;
}

/**
 * The publishes to send again now, earliest due first, within `bound`; each gets its next attempt
 * number and due time. Those due but over the bound are counted as deferred.
 */
export function sweepDue<P extends Resendable>(
  pending: Iterable<P>,
  now: number,
  bound: WindowLimits,
  backoff: Backoff,
  random: () => number,
): { resend: P[]; report: SweepReport } {
  const due: P[] = [];
  for (const p of pending) if (p.dueAt <= now) due.push(p);
  due.sort((a, b) => a.dueAt - b.dueAt);
  const resend: P[] = [];
  let bytes = 0;
  let maxAttempt = 0;
  const oldestDueMs = due.length > 0 ? now - (due[0] as P).dueAt : 0;
  for (const p of due) {
    if (resend.length >= bound.messages || (resend.length > 0 && bytes + p.bytes > bound.bytes)) break;
    p.attempt++;
    p.dueAt = now + ackTimeoutMs(p.attempt, backoff, random);
    bytes += p.bytes;
    if (p.attempt > maxAttempt) maxAttempt = p.attempt;
    resend.push(p);
  }
  const report = {
    resent: resend.length,
    resentBytes: bytes,
    deferred: due.length - resend.length,
    maxAttempt,
    oldestDueMs,
  };
  return { resend, report };
}
