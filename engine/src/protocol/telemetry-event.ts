/** Pure: no node:* imports, no clock, no env. */

/** A normalized telemetry event as stored in TM_EVENTS and in recordings (docs/semantics.md, "Input contract"). */
export interface TelemetryEvent {
  /** Event time, ms since epoch (clamped by ingest). */
  ts: number;
  /** Ingestion time, ms since epoch, stamped by ingest; monotonic per ingest instance. */
  ingest_ts: number;
  service: string;
  /** Normalized route (query string cut). Empty string when the client gave none. */
  route: string;
  /** HTTP status; error = status >= 500. */
  status: number;
  latency_ms: number;
  /** Distinct-user identity. Empty string when the client gave none. */
  user: string;
}
