/**
 * An OTLP log record → a TelemetryEvent (docs/ingest.md, "`POST /v1/logs`"): a record of a
 * resource with `service.name` becomes an event when it tells an HTTP outcome — `status` =
 * `http.response.status_code` (or the legacy `http.status_code`), else 500 when its severity is
 * ERROR or above (severityNumber ≥ 17); a record with neither is skipped (not an event). `ts` =
 * timeUnixNano, else observedTimeUnixNano; `latency_ms` = `http.server.request.duration`
 * (seconds, as in the semantic conventions) × 1000, else 0 as on /v1/events; `route` =
 * `http.route`, else `url.path`; `user` = `enduser.id` or `user.id`.
 */
import { eachAttribute, int64, millisOf, scalarOf } from "./any-value.js";
import { normalizeRoute, withTime, type EventLimits, type Normalized } from "../events/normalize-event.js";
import { firstHttpStatus, serviceProblem } from "./span-event.js";

const SEVERITY_ERROR = 17;
const MAX_LATENCY_MS = 86_400_000;

interface LogAttributes {
  status: unknown;
  legacyStatus: unknown;
  route: unknown;
  path: unknown;
  user: unknown;
  duration: unknown;
}

function readAttributes(list: unknown): LogAttributes {
  const a: LogAttributes = {
    status: undefined,
    legacyStatus: undefined,
    route: undefined,
    path: undefined,
    user: undefined,
    duration: undefined,
  };
  eachAttribute(list, (key, value) => {
    if (key === "http.response.status_code") a.status = scalarOf(value);
    else if (key === "http.status_code") a.legacyStatus = scalarOf(value);
    else if (key === "http.route") a.route = scalarOf(value);
    else if (key === "url.path") a.path = scalarOf(value);
    else if (key === "http.server.request.duration") a.duration = scalarOf(value);
    else if (key === "enduser.id" || (key === "user.id" && a.user === undefined)) a.user = scalarOf(value);
  });
  return a;
}

/** True for severityNumber ERROR..FATAL4 (17–24), as a number (protobuf, JSON) or its enum name (JSON). */
function isError(severity: unknown): boolean {
  if (typeof severity === "number") return severity >= SEVERITY_ERROR;
  return typeof severity === "string" && /^SEVERITY_NUMBER_(ERROR|FATAL)[234]?$/.test(severity);
}

/** The record's HTTP status, or undefined when it tells none (the record is then skipped). */
export function logStatus(record: Record<string, unknown>): number | undefined {
  const a = readAttributes(record.attributes);
  return firstHttpStatus([a.status, a.legacyStatus]) ?? (isError(record.severityNumber) ? 500 : undefined);
}

function fail(field: string, message: string): Normalized {
  return { ok: false, field, message, reason: "invalid" };
}

function text(v: unknown): string {
  return v === undefined ? "" : String(v);
}

/** Maps one log record with an HTTP status (see logStatus) of a resource with `service` to a normalized event. */
export function logToEvent(
  record: Record<string, unknown>,
  status: number,
  service: string | undefined,
  ingestTs: number,
  limits: EventLimits,
): Normalized {
  const bad = serviceProblem(service, "log record", limits);
  if (bad) return bad;
  const raw = int64(record.timeUnixNano) ? record.timeUnixNano : record.observedTimeUnixNano;
  const time = int64(raw);
  if (time === undefined || time <= 0)
    return fail("timeUnixNano", "timeUnixNano or observedTimeUnixNano must be unsigned 64-bit nanoseconds since epoch");
  const a = readAttributes(record.attributes);
  const route = normalizeRoute(text(a.route ?? a.path));
  const user = text(a.user);
  for (const [field, v] of [
    ["http.route", route],
    ["enduser.id", user],
  ] as const)
    if (v.length > limits.maxStringLength)
      return fail(field, `is ${v.length} characters; at most ${limits.maxStringLength} are allowed`);
  let latency = 0;
  if (a.duration !== undefined) {
    const ms = Math.round(Number(a.duration) * 1e6) / 1000;
    if (!Number.isFinite(ms) || ms < 0 || ms > MAX_LATENCY_MS)
      return fail("http.server.request.duration", "must be a number of seconds from 0 to 86400");
    latency = ms;
  }
  const event = { ts: 0, ingest_ts: ingestTs, service: service as string, route, status, latency_ms: latency, user };
  return withTime(millisOf(raw), ingestTs, limits, event);
}
