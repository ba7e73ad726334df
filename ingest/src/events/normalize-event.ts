/**
 * Turns one untrusted record into a normalized TelemetryEvent, or a per-record error naming the
 * field (docs/ingest.md, "`POST /v1/events`": future `ts` is clamped to ingest_ts and counted; `ts`
 * older than max age is rejected). No allocation beyond the event itself on the accepted path.
 */
import { ALL_SERVICES, type TelemetryEvent } from "@tidemark/engine/protocol";

export interface EventLimits {
  readonly maxStringLength: number;
  readonly maxFutureSkewMs: number;
  readonly maxAgeMs: number;
}

export interface RecordError {
  index: number;
  field: string;
  message: string;
}

/** What normalizing one record did; `clamped` is set when a future ts was pulled back. */
export type Normalized =
  | { ok: true; event: TelemetryEvent; clamped: boolean }
  | { ok: false; field: string; message: string; reason: RejectReason };

export type RejectReason = "invalid" | "too_old";

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
/** ts below this (2001-09-09) looks like seconds, not milliseconds. */
const SECONDS_HINT = 1e12;

function bad(field: string, message: string, reason: RejectReason = "invalid"): Normalized {
  return { ok: false, field, message, reason };
}

/** Event time in ms, or an error message. */
export function parseTs(raw: unknown): number | string {
  if (typeof raw === "number") {
    if (!Number.isFinite(raw)) return "must be a finite number of ms since epoch";
    return Math.trunc(raw);
  }
  if (typeof raw === "string") {
    if (!RFC3339.test(raw))
      return `must be ms since epoch or an RFC 3339 time such as 2026-12-01T07:00:00Z, got ${JSON.stringify(raw.slice(0, 40))}`;
    const ms = Date.parse(raw);
    return Number.isNaN(ms) ? `${JSON.stringify(raw)} is not a valid date` : ms;
  }
  return "must be a number (ms since epoch) or an RFC 3339 string";
}

/** `route` without its query string or fragment. */
export function normalizeRoute(route: string): string {
  const q = route.indexOf("?");
  const h = route.indexOf("#");
  const cut = q < 0 ? h : h < 0 ? q : Math.min(q, h);
  return cut < 0 ? route : route.slice(0, cut);
}

function text(raw: unknown, field: string, limit: number, required: boolean): string | Normalized {
  if (raw === undefined || raw === null) return required ? bad(field, "is required: a non-empty string") : "";
  if (typeof raw !== "string") return bad(field, `must be a string, got ${typeof raw}`);
  if (required && raw.length === 0) return bad(field, "must not be empty");
  if (raw.length > limit) return bad(field, `is ${raw.length} characters; at most ${limit} are allowed`);
  return raw;
}

/**
 * Validates `raw` (a parsed JSON value) at ingest time `ingestTs`. Defaults: `ts` = ingest_ts,
 * `route` = "", `status` = 200, `latency_ms` = 0, `user` = "". Unknown fields are ignored.
 */
export function normalizeEvent(raw: unknown, ingestTs: number, limits: EventLimits): Normalized {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return bad(
      "(record)",
      `must be a JSON object, got ${Array.isArray(raw) ? "an array" : raw === null ? "null" : typeof raw}`,
    );
  const r = raw as Record<string, unknown>;
  const service = text(r.service, "service", limits.maxStringLength, true);
  if (typeof service !== "string") return service;
  if (service === ALL_SERVICES)
    return bad("service", `"${ALL_SERVICES}" is reserved for the numbers across all services: name the service`);
  const routeRaw = typeof r.route === "string" ? normalizeRoute(r.route) : r.route;
  const route = text(routeRaw, "route", limits.maxStringLength, false);
  if (typeof route !== "string") return route;
  const user = text(r.user, "user", limits.maxStringLength, false);
  if (typeof user !== "string") return user;

  let status = 200;
  if (r.status !== undefined && r.status !== null) {
    if (typeof r.status !== "number" || !Number.isInteger(r.status) || r.status < 100 || r.status > 599)
      return bad("status", `must be an HTTP status, a whole number from 100 to 599, got ${JSON.stringify(r.status)}`);
    status = r.status;
  }
  let latency = 0;
  if (r.latency_ms !== undefined && r.latency_ms !== null) {
    if (
      typeof r.latency_ms !== "number" ||
      !Number.isFinite(r.latency_ms) ||
      r.latency_ms < 0 ||
      r.latency_ms > 86_400_000
    )
      return bad("latency_ms", `must be a number of ms from 0 to 86400000, got ${JSON.stringify(r.latency_ms)}`);
    latency = r.latency_ms;
  }
  return withTime(r.ts, ingestTs, limits, {
    ts: 0,
    ingest_ts: ingestTs,
    service,
    route,
    status,
    latency_ms: latency,
    user,
  });
}

/**
 * An ingest time not yet known: a body is parsed before its ingest_ts is stamped (the stamp and
 * the publish happen together, after parsing, docs/ingest.md "Ordering"), so parsers pass this
 * and RecordBatch.stamp applies the time rules later. An event's ts is NaN until then when the
 * record had none (ts defaults to ingest_ts).
 */
export const DEFERRED = NaN;

/**
 * Applies the time rules of docs/ingest.md, "`POST /v1/events`", to `event` (whose other fields
 * are valid). With ingestTs DEFERRED only the shape of ts is checked (RecordBatch.stamp does the rest).
 */
export function withTime(rawTs: unknown, ingestTs: number, limits: EventLimits, event: TelemetryEvent): Normalized {
  let ts = ingestTs;
  if (rawTs !== undefined && rawTs !== null) {
    const parsed = parseTs(rawTs);
    if (typeof parsed === "string") return bad("ts", parsed);
    ts = parsed;
  }
  if (Number.isNaN(ingestTs)) {
    event.ts = ts;
    return { ok: true, event, clamped: false };
  }
  const at = timeAt(ts, ingestTs, limits);
  if (typeof at === "string") return bad("ts", at, "too_old");
  event.ts = at.ts;
  return { ok: true, event, clamped: at.clamped };
}

/**
 * The time rules at ingest time `ingestTs` for an event time `ts` (NaN: none given, so ingestTs):
 * the message of a too-old ts, or the ts kept (a future ts past maxFutureSkew clamped to ingestTs).
 */
export function timeAt(ts: number, ingestTs: number, limits: EventLimits): { ts: number; clamped: boolean } | string {
  if (Number.isNaN(ts)) return { ts: ingestTs, clamped: false };
  if (ts < ingestTs - limits.maxAgeMs) {
    const hint = ts > 0 && ts < SECONDS_HINT ? " (it looks like seconds: send milliseconds)" : "";
    return `${ts} is older than the max age of ${limits.maxAgeMs} ms before ingest time ${ingestTs}${hint}`;
  }
  if (ts > ingestTs + limits.maxFutureSkewMs) return { ts: ingestTs, clamped: true };
  return { ts, clamped: false };
}
