import { describe, expect, it } from "vitest";
import { decodeEventBatch, encodeEventBatch, partitionOf, type TelemetryEvent } from "./protocol.js";

describe("event batch codec", () => {
  it("round-trips events, including strings that need escaping", () => {
    const events: TelemetryEvent[] = [
      { ts: 1, ingest_ts: 2, service: "api", route: "/a", status: 200, latency_ms: 1.5, user: "u1" },
      { ts: 3, ingest_ts: 4, service: 'we"ird\nsvc', route: "", status: 503, latency_ms: 0, user: "" },
    ];
    expect(decodeEventBatch(encodeEventBatch(events))).toEqual(events);
  });
  it("decodes an empty body to no events", () => {
    expect(decodeEventBatch("")).toEqual([]);
  });
});

describe("partitionOf", () => {
  it("is stable and within range", () => {
    const p = partitionOf("checkout", 8);
    expect(p).toBe(partitionOf("checkout", 8));
    for (const s of ["a", "b", "checkout", "search", "payments"]) {
      const q = partitionOf(s, 8);
      expect(q).toBeGreaterThanOrEqual(0);
      expect(q).toBeLessThan(8);
    }
  });
});
