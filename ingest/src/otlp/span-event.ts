/**
 * An OTLP span → a TelemetryEvent (docs/ingest.md, "`POST /v1/traces`"): server spans (kind 2) and
 * root spans become events with `ts` = end time, `latency_ms` = end − start, `status` =
 * `http.response.status_code` (or the legacy `http.status_code`), else 500 when the span status is
 * ERROR (2), else 200; `route` = `http.route`, else the span name; `user` = `enduser.id` or
 * `user.id`.
 */
import { ALL_SERVICES } from "@tidemark/engine/protocol";
import { eachAttribute, int64, millisOf, nanosBetween, scalarOf } from "./any-value.js";
import { normalizeRoute, withTime, type EventLimits, type Normalized } from "../events/normalize-event.js";

const SPAN_KIND_SERVER = 2;
const STATUS_CODE_ERROR = 2;

interface SpanAttributes {
  status: string | number | undefined;
  legacyStatus: string | number | undefined;
  route: string | number | undefined;
  user: string | number | undefined;
}

function readAttributes(list: unknown): SpanAttributes {
  const a: SpanAttributes = { status: undefined, legacyStatus: undefined, route: undefined, user: undefined };
  eachAttribute(list, (key, value) => {
    if (key === "http.response.status_code") a.status = scalarOf(value);
    else if (key === "http.status_code") a.legacyStatus = scalarOf(value);
    else if (key === "http.route") a.route = scalarOf(value);
    else if (key === "enduser.id" || (key === "user.id" && a.user === undefined)) a.user = scalarOf(value);
  });
  return a;
}

/** `service.name` of a resource, or undefined. */
export function serviceNameOf(resource: unknown): string | undefined {
  let name: string | undefined;
  eachAttribute((resource as { attributes?: unknown } | null | undefined)?.attributes, (key, value) => {
    if (key === "service.name") {
      const v = scalarOf(value);
      if (typeof v === "string") name = v;
    }
  });
  return name;
}

function isRoot(parent: unknown): boolean {
  if (parent === undefined || parent === null) return true;
  // protobufjs leaves an absent bytes field as [] on the prototype; OTLP/JSON sends "" or omits it.
  if (typeof parent === "string" || parent instanceof Uint8Array || Array.isArray(parent)) return parent.length === 0;
  return false;
}

function isServer(kind: unknown): boolean {
  return kind === SPAN_KIND_SERVER || kind === "SPAN_KIND_SERVER";
}

/** True when the span becomes an event. */
export function isEventSpan(span: Record<string, unknown>): boolean {
  return isServer(span.kind) || isRoot(span.parentSpanId);
}

/** The first of `values` that is an HTTP status (100–599, number or numeric string), or undefined. */
export function firstHttpStatus(values: readonly unknown[]): number | undefined {
  for (const v of values) {
    const n = typeof v === "string" ? Number(v) : v;
    if (typeof n === "number" && Number.isInteger(n) && n >= 100 && n <= 599) return n;
  }
  return undefined;
}

function httpStatus(a: SpanAttributes, spanStatus: unknown): number {
  const status = firstHttpStatus([a.status, a.legacyStatus]);
  if (status !== undefined) return status;
  const code = (spanStatus as { code?: unknown } | null | undefined)?.code;
  return code === STATUS_CODE_ERROR || code === "STATUS_CODE_ERROR" ? 500 : 200;
}

function fail(field: string, message: string): Normalized {
  return { ok: false, field, message, reason: "invalid" };
}

/** Why a record (`what`: span, log record) of a resource with `service` cannot be an event, or undefined. */
export function serviceProblem(
  service: string | undefined,
  what: string,
  limits: EventLimits,
): (Normalized & { ok: false }) | undefined {
  const field = "resource.service.name";
  if (service === undefined || service === "")
    return fail(
      field,
      `the ${what}'s resource has no service.name attribute: set the service name in the SDK's resource`,
    ) as Normalized & { ok: false };
  if (service === ALL_SERVICES)
    return fail(
      field,
      `"${ALL_SERVICES}" is reserved for the numbers across all services: set the service name in the SDK's resource`,
    ) as Normalized & { ok: false };
  if (service.length > limits.maxStringLength)
    return fail(
      field,
      `is ${service.length} characters; at most ${limits.maxStringLength} are allowed`,
    ) as Normalized & {
      ok: false;
    };
  return undefined;
}

/** Maps one event span (see isEventSpan) of a resource with `service` to a normalized event. */
export function spanToEvent(
  span: Record<string, unknown>,
  service: string | undefined,
  ingestTs: number,
  limits: EventLimits,
): Normalized {
  const bad = serviceProblem(service, "span", limits);
  if (bad) return bad;
  const start = int64(span.startTimeUnixNano);
  const end = int64(span.endTimeUnixNano);
  if (start === undefined || end === undefined || end <= 0)
    return fail(
      "endTimeUnixNano",
      "startTimeUnixNano and endTimeUnixNano must be unsigned 64-bit nanoseconds since epoch",
    );
  if (end < start) return fail("endTimeUnixNano", "is before startTimeUnixNano");
  const attrs = readAttributes(span.attributes);
  const name = typeof span.name === "string" ? span.name : "";
  const route = normalizeRoute(typeof attrs.route === "string" && attrs.route !== "" ? attrs.route : name);
  if (route.length > limits.maxStringLength)
    return fail("http.route", `is ${route.length} characters; at most ${limits.maxStringLength} are allowed`);
  const user = attrs.user === undefined ? "" : String(attrs.user);
  if (user.length > limits.maxStringLength)
    return fail("enduser.id", `is ${user.length} characters; at most ${limits.maxStringLength} are allowed`);
  const status = httpStatus(attrs, span.status);
  const latency = Math.round(nanosBetween(span.startTimeUnixNano, span.endTimeUnixNano) / 1000) / 1000;
  const event = { ts: 0, ingest_ts: ingestTs, service: service as string, route, status, latency_ms: latency, user };
  return withTime(millisOf(span.endTimeUnixNano), ingestTs, limits, event);
}
