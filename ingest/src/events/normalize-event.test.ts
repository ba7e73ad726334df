import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IngestClock } from "./ingest-clock.js";
import { normalizeEvent, normalizeRoute } from "./normalize-event.js";

const limits = { maxStringLength: 256, maxFutureSkewMs: 300_000, maxAgeMs: 86_400_000 };
const NOW = 1_790_000_000_000;

describe("normalizeEvent", () => {
  it("keeps a valid event and fills defaults", () => {
    expect(normalizeEvent({ service: "s", ts: NOW - 10 }, NOW, limits)).toEqual({
      ok: true,
      clamped: false,
      event: { ts: NOW - 10, ingest_ts: NOW, service: "s", route: "", status: 200, latency_ms: 0, user: "" },
    });
  });

  it("clamps ts beyond the future skew to ingest_ts and rejects ts older than the max age", () => {
    const at = (ts: number) => normalizeEvent({ service: "s", ts }, NOW, limits);
    expect(at(NOW + 300_000)).toMatchObject({ ok: true, clamped: false, event: { ts: NOW + 300_000 } });
    expect(at(NOW + 300_001)).toMatchObject({ ok: true, clamped: true, event: { ts: NOW } });
    expect(at(2_147_483_648_000)).toMatchObject({ ok: true, clamped: true, event: { ts: NOW } });
    expect(at(NOW - 86_400_000)).toMatchObject({ ok: true });
    expect(at(NOW - 86_400_001)).toMatchObject({ ok: false, field: "ts", reason: "too_old" });
  });

  it("cuts query strings and fragments from routes", () => {
    expect(normalizeRoute("/a/b?x=1#y")).toBe("/a/b");
    expect(normalizeRoute("/a#y?x")).toBe("/a");
    expect(normalizeRoute("/a")).toBe("/a");
  });

  it('refuses the service "*", kept for the numbers across all services, naming the field', () => {
    const r = normalizeEvent({ service: "*" }, NOW, limits);
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).toMatch(/service.*reserved for the numbers across all services/);
  });

  it("never throws and always names a field, whatever the record", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.record({
            service: fc.anything(),
            ts: fc.anything(),
            status: fc.anything(),
            latency_ms: fc.anything(),
            route: fc.anything(),
            user: fc.anything(),
          }),
        ),
        (raw) => {
          const r = normalizeEvent(raw, NOW, limits);
          if (r.ok) {
            expect(r.event.ts).toBeGreaterThanOrEqual(NOW - limits.maxAgeMs);
            expect(r.event.ts).toBeLessThanOrEqual(NOW + limits.maxFutureSkewMs);
            expect(Number.isFinite(r.event.latency_ms)).toBe(true);
          } else {
            expect(r.field.length).toBeGreaterThan(0);
            expect(r.message.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("IngestClock", () => {
  it("never goes backwards when the wall clock does", () => {
    const wall = [100, 105, 90, 106, 106, 50];
    const clock = new IngestClock(() => wall.shift() ?? 0);
    expect(Array.from({ length: 6 }, () => clock.now())).toEqual([100, 105, 105, 106, 106, 106]);
  });
});
