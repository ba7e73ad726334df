/**
 * Node's HTTP server timeouts for ingest (docs/security.md, "Ingest limits"): the headers of a
 * request must arrive within headersTimeoutMs and the whole request within requestTimeoutMs, or
 * Node answers 408 and closes the connection. Node checks them every connectionsCheckingInterval
 * (30 s by default), so the interval is tied to the bounds: a connection is cut at most
 * checkIntervalMs after its bound.
 */
import type { ServerOptions } from "node:http";

/** How often Node looks for connections past a bound: half the smallest bound, from 50 ms to 1 s. */
export function checkIntervalMs(...bounds: number[]): number {
  const on = bounds.filter((b) => b > 0);
  return on.length === 0 ? 1000 : Math.max(50, Math.min(1000, Math.floor(Math.min(...on) / 2)));
}

/** The options Node's HTTP(S) server takes at construction (fastify sets requestTimeout again after it). */
export function serverTimeouts(headersTimeoutMs: number, requestTimeoutMs: number): ServerOptions {
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: checkIntervalMs(headersTimeoutMs, requestTimeoutMs),
  };
}
