/**
 * What `tidemark load` does with each answer of `POST /v1/events` (docs/ingest.md, "Errors";
 * docs/operations.md, "`tidemark load`", "Sending"), and how long it waits before resending the
 * same batch with the same Idempotency-Key. Pure: the jitter's uniform draw is passed in.
 */

/**
 * - `accepted`: 2xx; the answer names the records it rejected.
 * - `retry`: 429, any 5xx, or no answer (connection refused, reset, timed out): resend the same
 *   batch, same key (JetStream deduplicates what a failed attempt stored).
 * - `refused`: another 4xx (400, 413, …): this batch is not stored and never resent; counted.
 * - `fatal`: 401/403 (the token), 404/405 (not ingest's URL), 415 (the format), 1xx/3xx: every
 *   batch would get the same, so the run stops with a coded error.
 */
export type Verdict = "accepted" | "retry" | "refused" | "fatal";

const FATAL = new Set([401, 403, 404, 405, 415]);

export function classifyStatus(status: number): Verdict {
  if (status >= 200 && status < 300) return "accepted";
  if (status === 429 || status >= 500) return "retry";
  if (status < 400 || FATAL.has(status)) return "fatal";
  return "refused";
}

/** Retry-After is honoured up to this; a larger value waits this long. */
export const RETRY_AFTER_CAP_MS = 10_000;
const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 5000;

/** Retry-After in seconds (ingest sends seconds), capped; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (!Number.isFinite(seconds) || seconds < 0) return undefined;
  return Math.min(seconds * 1000, RETRY_AFTER_CAP_MS);
}

/**
 * The wait before attempt `attempt + 1` (attempt ≥ 1 is the one that failed): exponential
 * backoff from 200 ms doubling to 5 s, with equal jitter (½…1 of it, `u` uniform in [0, 1)),
 * and never less than the capped Retry-After.
 */
export function retryDelayMs(attempt: number, retryAfter: string | undefined, u: number): number {
  const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  const jittered = backoff * (0.5 + 0.5 * u);
  return Math.round(Math.max(retryAfterMs(retryAfter) ?? 0, jittered));
}
