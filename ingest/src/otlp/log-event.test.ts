import { describe, expect, it } from "vitest";
import { logStatus, logToEvent } from "./log-event.js";

const limits = { maxStringLength: 256, maxFutureSkewMs: 300_000, maxAgeMs: 86_400_000 };
const NOW = 1_796_400_000_000;
const attr = (key: string, value: Record<string, unknown>) => ({ key, value });

describe("OTLP log record → event (docs/ingest.md, POST /v1/logs)", () => {
  it("takes the status from the attribute, else ERROR severity as 500, else none (skipped)", () => {
    expect(logStatus({ attributes: [attr("http.response.status_code", { intValue: "404" })] })).toBe(404);
    expect(logStatus({ attributes: [attr("http.status_code", { stringValue: "201" })], severityNumber: 17 })).toBe(201);
    expect(logStatus({ severityNumber: 17 })).toBe(500);
    expect(logStatus({ severityNumber: "SEVERITY_NUMBER_FATAL4" })).toBe(500);
    expect(logStatus({ severityNumber: 16 })).toBeUndefined();
    expect(logStatus({ attributes: [attr("http.response.status_code", { intValue: 99 })] })).toBeUndefined();
  });

  it("maps time (exact to the ms past 2^53 ns), duration in seconds, route and user", () => {
    const r = logToEvent(
      {
        timeUnixNano: "1796399999999000000",
        attributes: [
          attr("http.server.request.duration", { doubleValue: 0.0125 }),
          attr("url.path", { stringValue: "/a?b=1" }),
          attr("user.id", { stringValue: "u" }),
        ],
      },
      503,
      "svc",
      NOW,
      limits,
    );
    expect(r).toEqual({
      ok: true,
      clamped: false,
      event: {
        ts: 1_796_399_999_999,
        ingest_ts: NOW,
        service: "svc",
        route: "/a",
        status: 503,
        latency_ms: 12.5,
        user: "u",
      },
    });
    const observed = logToEvent({ timeUnixNano: "0", observedTimeUnixNano: String(NOW * 1e6) }, 200, "s", NOW, limits);
    expect(observed).toMatchObject({ ok: true, event: { ts: NOW, route: "", latency_ms: 0 } });
  });

  it("refuses records without a service, without a time, or with a bad duration, naming the field", () => {
    expect(logToEvent({ timeUnixNano: "1" }, 200, undefined, NOW, limits)).toMatchObject({
      ok: false,
      field: "resource.service.name",
    });
    expect(logToEvent({}, 200, "s", NOW, limits)).toMatchObject({ ok: false, field: "timeUnixNano" });
    const bad = {
      timeUnixNano: String(NOW * 1e6),
      attributes: [attr("http.server.request.duration", { doubleValue: -1 })],
    };
    expect(logToEvent(bad, 200, "s", NOW, limits)).toMatchObject({ ok: false, field: "http.server.request.duration" });
  });
});
