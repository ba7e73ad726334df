import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "./telemetry-event.js";
import { encodeCompactEventBatch, encodeEventBatch } from "./event-batch.js";
import { arrayRows, decodeCompactRows } from "./event-rows.js";

const events: TelemetryEvent[] = [
  {
    ts: 1767225598000,
    ingest_ts: 1767225600250,
    service: "api",
    route: "GET /a",
    status: 200,
    latency_ms: 1.5,
    user: "u1",
  },
  { ts: 1767225600300, ingest_ts: 1767225600250, service: "api", route: "", status: 503, latency_ms: 12.25, user: "" },
  {
    ts: 3,
    ingest_ts: 1767225600251,
    service: "w\u00e9b",
    route: "/x",
    status: 201,
    latency_ms: Math.PI,
    user: "\u{1f680}",
  },
];

describe("event rows (docs/decisions/0055-events-as-rows.md)", () => {
  it("makes each row of a compact batch the event it was, keys in the recording order, a new object each time", () => {
    const rows = decodeCompactRows(encodeCompactEventBatch(events));
    expect(rows.length).toBe(3);
    expect(events.map((_, i) => rows.ingestTs(i))).toEqual(events.map((e) => e.ingest_ts));
    expect(events.map((_, i) => rows.event(i))).toEqual(events);
    expect(rows.toArray()).toEqual(events);
    // The same shape as the NDJSON decoder's objects (the core reads them monomorphically).
    expect(Object.keys(rows.event(0))).toEqual(
      Object.keys(JSON.parse(encodeEventBatch(events).split("\n")[0] as string)),
    );
    expect(rows.event(1)).not.toBe(rows.event(1));
  });

  it("reads events that are objects already as rows of the same objects", () => {
    const rows = arrayRows(events);
    expect(rows.length).toBe(3);
    expect(rows.event(2)).toBe(events[2]);
    expect(rows.ingestTs(1)).toBe(1767225600250);
  });
});
