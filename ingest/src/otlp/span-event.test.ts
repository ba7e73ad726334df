import { describe, expect, it } from "vitest";
import { isEventSpan, serviceNameOf, spanToEvent } from "./span-event.js";

const limits = { maxStringLength: 256, maxFutureSkewMs: 300_000, maxAgeMs: 86_400_000 };
const NOW = 1_790_000_000_000;
const ns = (ms: number): string => String(BigInt(ms) * 1_000_000n);
const attr = (key: string, value: Record<string, unknown>) => ({ key, value });

function span(extra: Record<string, unknown>): Record<string, unknown> {
  return {
    name: "GET /items/{id}",
    kind: 2,
    parentSpanId: "00f067aa0ba902b7",
    startTimeUnixNano: ns(NOW - 100),
    endTimeUnixNano: ns(NOW - 58),
    ...extra,
  };
}

describe("OTLP span → event", () => {
  it("takes server and root spans only", () => {
    expect(isEventSpan(span({}))).toBe(true);
    expect(isEventSpan(span({ kind: 3 }))).toBe(false);
    expect(isEventSpan(span({ kind: 3, parentSpanId: "" }))).toBe(true);
    expect(isEventSpan(span({ kind: 1, parentSpanId: undefined }))).toBe(true);
    expect(isEventSpan(span({ kind: 1, parentSpanId: new Uint8Array(0) }))).toBe(true);
  });

  it("reads status from http.response.status_code, then http.status_code, then the span status", () => {
    const status = (attributes: unknown[], spanStatus?: unknown) => {
      const r = spanToEvent(span({ attributes, status: spanStatus }), "svc", NOW, limits);
      return r.ok ? r.event.status : r.message;
    };
    expect(
      status([attr("http.response.status_code", { intValue: "404" }), attr("http.status_code", { intValue: 500 })]),
    ).toBe(404);
    expect(status([attr("http.status_code", { stringValue: "502" })])).toBe(502);
    expect(status([attr("http.response.status_code", { intValue: 99 })], { code: 2 })).toBe(500);
    expect(status([], { code: 2 })).toBe(500);
    expect(status([], { code: 1 })).toBe(200);
  });

  it("maps route, user, service, time and latency", () => {
    const r = spanToEvent(
      span({
        attributes: [
          attr("http.route", { stringValue: "/items/{id}?v=2" }),
          attr("user.id", { stringValue: "u2" }),
          attr("enduser.id", { stringValue: "u1" }),
        ],
      }),
      "svc",
      NOW,
      limits,
    );
    expect(r).toEqual({
      ok: true,
      clamped: false,
      event: {
        ts: NOW - 58,
        ingest_ts: NOW,
        service: "svc",
        route: "/items/{id}",
        status: 200,
        latency_ms: 42,
        user: "u1",
      },
    });
    const named = spanToEvent(span({}), "svc", NOW, limits);
    expect(named.ok && named.event.route).toBe("GET /items/{id}");
    expect(serviceNameOf({ attributes: [attr("service.name", { stringValue: "checkout" })] })).toBe("checkout");
    expect(serviceNameOf({ attributes: [attr("service.name", { intValue: 5 })] })).toBeUndefined();
  });

  it("refuses spans without a service, with end before start, or too old, naming the field", () => {
    expect(spanToEvent(span({}), undefined, NOW, limits)).toMatchObject({ ok: false, field: "resource.service.name" });
    const star = spanToEvent(span({}), "*", NOW, limits);
    expect(star).toMatchObject({ ok: false, field: "resource.service.name" });
    expect(JSON.stringify(star)).toMatch(/reserved for the numbers across all services/);
    expect(
      spanToEvent(span({ startTimeUnixNano: ns(NOW), endTimeUnixNano: ns(NOW - 1) }), "s", NOW, limits),
    ).toMatchObject({ ok: false, field: "endTimeUnixNano" });
    expect(spanToEvent(span({ endTimeUnixNano: "soon" }), "s", NOW, limits)).toMatchObject({
      ok: false,
      field: "endTimeUnixNano",
    });
    expect(
      spanToEvent(
        span({ startTimeUnixNano: ns(NOW - 3 * 86_400_000), endTimeUnixNano: ns(NOW - 2 * 86_400_000) }),
        "s",
        NOW,
        limits,
      ),
    ).toMatchObject({ ok: false, field: "ts", reason: "too_old" });
  });
});
