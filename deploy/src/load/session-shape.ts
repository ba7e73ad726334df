/**
 * How long users think, how many requests a session makes and how long they then stay quiet,
 * sized so that `users` users make `rate` requests per second in all (docs/operations.md,
 * "`tidemark load`", "Traffic model"). Pure.
 *
 * A user's cycle is a session of L requests (geometric, mean `requestsMean`) with L − 1 think
 * times between them (mean `thinkMeanMs`), then a quiet spell of more than a minute (mean
 * `quietMeanMs`). One user then makes L̄ requests per L̄·P ms on average, P = users / rate, so
 * (L̄ − 1)·T + Q = L̄·P. Think times are 90 % of P (capped at 20 s): most of the population is in
 * a session at any moment, so a 30 s run sees most of it.
 */
export interface SessionShape {
  /** Mean think time between two requests of a session, ms (uniform in ½…1½ of it). */
  readonly thinkMeanMs: number;
  /** Mean requests per session (geometric, at least 1). */
  readonly requestsMean: number;
  /** Mean quiet time after a session, ms: QUIET_MIN_MS plus an exponential. */
  readonly quietMeanMs: number;
  /** Mean ms between two requests of one user over whole cycles: users / rate. */
  readonly perUserMs: number;
}

/** A session ends with at least this much silence: "gone quiet for longer than a minute". */
export const QUIET_MIN_MS = 60_000;
/** Mean quiet time when the rate allows it. */
const QUIET_MEAN_MS = 90_000;
const THINK_MAX_MS = 20_000;
/** Think time as a share of users / rate: the share of the population in a session. */
const ACTIVE_SHARE = 0.9;
/** Sessions are at least this long on average (a population far larger than the rate needs). */
const MIN_REQUESTS = 3;

export function sessionShape(rate: number, users: number): SessionShape {
  if (!(rate > 0)) throw new RangeError(`rate must be > 0, got ${rate}`);
  if (!(users >= 1)) throw new RangeError(`users must be ≥ 1, got ${users}`);
  const perUserMs = (1000 * users) / rate;
  const thinkMeanMs = Math.min(THINK_MAX_MS, ACTIVE_SHARE * perUserMs);
  const requestsMean = (QUIET_MEAN_MS - thinkMeanMs) / (perUserMs - thinkMeanMs);
  if (requestsMean >= MIN_REQUESTS) return { thinkMeanMs, requestsMean, quietMeanMs: QUIET_MEAN_MS, perUserMs };
  // Few requests per user: sessions of MIN_REQUESTS and a longer quiet (> QUIET_MEAN_MS here).
  const quietMeanMs = MIN_REQUESTS * perUserMs - (MIN_REQUESTS - 1) * thinkMeanMs;
  return { thinkMeanMs, requestsMean: MIN_REQUESTS, quietMeanMs, perUserMs };
}

/** Share of the time a user spends inside sessions (between two of its requests). */
export function activeShare(s: SessionShape): number {
  const inSession = (s.requestsMean - 1) * s.thinkMeanMs;
  return inSession / (inSession + s.quietMeanMs);
}
