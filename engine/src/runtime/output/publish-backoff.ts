/**
 * The ack timeouts of the engine's publishes (docs/decisions/0035-backpressure.md, "Resends"): a
 * publish not acknowledged in time is sent again, each attempt waiting twice as long as the one
 * before, capped, with jitter so that publishes sent together are not resent together.
 *
 * Attempt k (0 for the first send) waits `d/2 + random · d/2` with `d = min(cap, first · 2^(k+1))`:
 * half of the bound fixed, half drawn ("equal jitter"). With the defaults attempt 0 waits 1–2 s,
 * attempt 1 2–4 s, … and from attempt 4 on 15–30 s. The fixed half is the point of a timeout: a
 * healthy PubAck comes back in milliseconds, and full jitter's draws near zero would resend a
 * publish whose ack is still on its way.
 *
 * Pure: the random source is an argument.
 */

export interface Backoff {
  /** The first attempt's timeout lies in [first, 2·first]. */
  readonly firstMs: number;
  /** No timeout is longer than this. */
  readonly capMs: number;
}

/** The engine's publishes: TM_PANES, TM_LATE (PaneSink) and TM_PARTIALS (SerialPublisher). */
export const PUBLISH_BACKOFF: Backoff = Object.freeze({ firstMs: 1_000, capMs: 30_000 });

/** How long attempt `attempt` (0: the first send) waits for its acknowledgement, ms. */
export function ackTimeoutMs(attempt: number, b: Backoff, random: () => number): number {
  const bound = Math.min(b.capMs, b.firstMs * 2 ** Math.min(attempt + 1, 52));
  return bound / 2 + random() * (bound / 2);
}
