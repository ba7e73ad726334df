/**
 * Random streams in arrival order for property tests: each row waits `gap` ms after the previous
 * one to arrive (ingest_ts) and happened `delay` ms before it arrived (ts), so event times run
 * behind arrival by up to the largest delay.
 */
import type { TelemetryEvent } from "../../protocol.js";

export interface ArrivalRow {
  gap: number;
  delay: number;
}

/** The rows as events arriving from `start` on; `fields` gives each its key, status, latency and user. */
export function arrivalOrder<R extends ArrivalRow>(
  rows: readonly R[],
  start: number,
  fields: (r: R) => Omit<TelemetryEvent, "ts" | "ingest_ts">,
): TelemetryEvent[] {
  let t = start;
  return rows.map((r) => {
    t += r.gap;
    return { ts: t - r.delay, ingest_ts: t, ...fields(r) };
  });
}
