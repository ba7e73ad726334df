import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "./telemetry-event.js";
import {
  decodeEventBatch,
  encodeCompactEventBatch,
  encodeEventBatch,
  encodeEventBatchBody,
  isCompactEventBatch,
} from "./event-batch.js";
import { arrayRows, decodeCompactRows } from "./event-rows.js";

const sample: TelemetryEvent[] = [
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
    service: 'we"ird\nsvc',
    route: "/caf\u00e9",
    status: 201,
    latency_ms: 0,
    user: "\u{1f680}",
  },
];

describe("compact event batch", () => {
  it("round-trips events from bytes and from the string of its bytes", () => {
    const body = encodeCompactEventBatch(sample);
    expect(isCompactEventBatch(body)).toBe(true);
    expect(decodeEventBatch(body)).toEqual(sample);
    expect(decodeEventBatch(new TextDecoder().decode(body))).toEqual(sample);
  });

  it("is valid UTF-8 whose bytes outside the string table are all below 0x80", () => {
    const body = encodeCompactEventBatch(sample);
    const text = new TextDecoder("utf-8", { fatal: true }).decode(body);
    expect(new TextEncoder().encode(text)).toEqual(body);
    const ascii = encodeCompactEventBatch([{ ...(sample[0] as TelemetryEvent), latency_ms: Math.PI, ts: 0.5 }]);
    expect([...ascii].every((b) => b < 0x80)).toBe(true);
  });

  it("interns strings per batch: a repeated service costs its index, not its text", () => {
    const one = encodeCompactEventBatch([sample[0] as TelemetryEvent]);
    const many = encodeCompactEventBatch(Array.from({ length: 100 }, () => sample[0] as TelemetryEvent));
    // 10 bytes a row here (ingest delta 1, ts offset 3, status 2, latency 1, three indices), and
    // a count of 100 takes a second byte.
    expect(many.length - one.length).toBe(99 * 10 + 1);
    expect(many.length).toBeLessThan(encodeEventBatch(Array(100).fill(sample[0])).length / 10);
  });

  it("round-trips any finite numbers exactly, floats, huge and negative values included", () => {
    const num = fc.oneof(
      fc.integer({ min: -1e6, max: 1e6 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(0, -0, 2 ** 53, -(2 ** 53), 1767225600000, 0.1, 123.4),
    );
    const str = fc.oneof(fc.constantFrom("", "api", "/r1", "u1"), fc.string({ unit: "grapheme" }));
    const event = fc.record({
      ts: num,
      ingest_ts: num,
      service: str,
      route: str,
      status: num,
      latency_ms: num,
      user: str,
    });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const back = decodeEventBatch(encodeCompactEventBatch(events));
        expect(back.length).toBe(events.length);
        back.forEach((e, i) => {
          const want = events[i] as TelemetryEvent;
          // -0 and 0 are one value on the wire and in JSON alike.
          for (const k of ["ts", "ingest_ts", "status", "latency_ms"] as const) expect(e[k] + 0).toBe(want[k] + 0);
          expect([e.service, e.route, e.user]).toEqual([want.service, want.route, want.user]);
        });
      }),
      { numRuns: 300 },
    );
  });

  it("falls back to NDJSON for a string UTF-8 cannot carry (a lone surrogate)", () => {
    const odd = { ...(sample[0] as TelemetryEvent), service: "a\ud800b" };
    expect(() => encodeCompactEventBatch([odd])).toThrow(/lone surrogate/);
    const body = encodeEventBatchBody([odd]);
    expect(isCompactEventBatch(body)).toBe(false);
    expect(decodeEventBatch(body)).toEqual([odd]);
    expect(isCompactEventBatch(encodeEventBatchBody(sample))).toBe(true);
  });

  it("refuses truncated, padded or foreign bodies instead of inventing events", () => {
    const body = encodeCompactEventBatch(sample);
    for (const cut of [3, 10, body.length - 1]) expect(() => decodeEventBatch(body.subarray(0, cut))).toThrow();
    expect(() => decodeEventBatch(new Uint8Array([...body, 1]))).toThrow(/left after/);
    expect(() => decodeEventBatch(new Uint8Array([0, 2, 0]))).toThrow(/version 2/);
    const nan = encodeCompactEventBatch([{ ...(sample[0] as TelemetryEvent), latency_ms: NaN }]);
    expect(() => decodeEventBatch(nan)).toThrow(/not finite/);
    expect(() => decodeEventBatch(new Uint8Array([0, 1, 0x7f, 0x7f, 0x7f, 0x3f]))).toThrow();
  });

  // Golden bytes: the compact batch is a wire format of TM_EVENTS; changing it needs a new version.
  const golden: TelemetryEvent[] = [
    {
      ts: 1767225600000,
      ingest_ts: 1767225600250,
      service: "api",
      route: "GET /a",
      status: 200,
      latency_ms: 1.5,
      user: "u1",
    },
    {
      ts: 1767225600100,
      ingest_ts: 1767225600250,
      service: "api",
      route: "",
      status: 503,
      latency_ms: 0,
      user: "caf\u00e9",
    },
  ];
  // Derived by hand from the layout in event-batch.ts (sextet varints, zigzag), not by running the encoder.
  const goldenHex =
    "0001020500000001100306020004617069474554202f617531636166c3a9" + "7447556d6d5b33740750061e000102006c046e0f00000304";

  it("encodes a fixed batch to the committed bytes", () => {
    expect(Buffer.from(encodeCompactEventBatch(golden)).toString("hex")).toBe(goldenHex);
  });

  it("decodes the committed bytes to the fixed batch", () => {
    expect(decodeEventBatch(new Uint8Array(Buffer.from(goldenHex, "hex")))).toEqual(golden);
  });
});

describe("event rows (docs/decisions/0055-events-as-rows.md)", () => {
  it("makes each row of a compact batch the event it was, keys in the recording order, a new object each time", () => {
    const rows = decodeCompactRows(encodeCompactEventBatch(sample));
    expect(rows.length).toBe(sample.length);
    expect(sample.map((_, i) => rows.ingestTs(i))).toEqual(sample.map((e) => e.ingest_ts));
    expect(sample.map((_, i) => rows.event(i))).toEqual(sample);
    expect(rows.toArray()).toEqual(sample);
    // The same shape as the NDJSON decoder's objects (the core reads them monomorphically).
    const ndjson = decodeEventBatch(encodeEventBatch(sample))[0] as TelemetryEvent;
    expect(Object.keys(rows.event(0))).toEqual(Object.keys(ndjson));
    expect(rows.event(1)).not.toBe(rows.event(1));
  });

  it("reads events that are objects already as rows of the same objects", () => {
    const rows = arrayRows(sample);
    expect(rows.length).toBe(sample.length);
    expect(rows.event(2)).toBe(sample[2]);
    expect(rows.ingestTs(1)).toBe((sample[1] as TelemetryEvent).ingest_ts);
  });
});
