/**
 * What to do after a remote-write request (docs/remote-write.md, "Retries"), as Prometheus's own
 * remote-write does: a 2xx is accepted; 5xx, 429 and network errors are retried with exponential
 * backoff and full jitter, honouring `Retry-After`; any other answer (4xx) is final: the batch is
 * refused, counted and logged, never retried.
 */

export type Outcome = { readonly kind: "accepted" } | { readonly kind: "refused" } | { readonly kind: "retry" };

export interface Backoff {
  /** First wait, ms. */
  readonly minMs: number;
  /** Largest wait, ms (Retry-After is capped by it too). */
  readonly maxMs: number;
}

/** The outcome of an HTTP status; `undefined` status = no answer (network error, timeout). */
export function outcomeOf(status: number | undefined): Outcome {
  if (status === undefined) return { kind: "retry" };
  if (status >= 200 && status < 300) return { kind: "accepted" };
  if (status >= 500 || status === 429) return { kind: "retry" };
  return { kind: "refused" };
}

/**
 * Wait before retry number `attempt` (1 = the first retry): a Retry-After in the future wins
 * (capped at maxMs); else full jitter over min(maxMs, minMs · 2^(attempt−1)).
 * @param random a number in [0, 1)
 */
export function retryDelayMs(attempt: number, backoff: Backoff, random: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && retryAfterMs >= 0) return Math.min(retryAfterMs, backoff.maxMs);
  const ceiling = Math.min(backoff.maxMs, backoff.minMs * 2 ** Math.max(0, attempt - 1));
  return Math.max(backoff.minMs / 2, Math.floor(ceiling * random));
}

/** `Retry-After` as ms from `nowMs`: delta seconds or an HTTP date; undefined when absent or malformed. */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (header === null || header === undefined || header.trim() === "") return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
