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

  // Golden bytes (docs/decisions/0002-event-batch-format.md): the body is the wire format of TM_EVENTS
  // and of recordings; changing it must be deliberate (a new `Tm-Encoding`), so this test must change too.
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
    { ts: 3, ingest_ts: 4, service: 'we"ird\nsvc', route: "", status: 503, latency_ms: 0, user: "caf\u00e9" },
  ];
  const goldenHex =
    "7b227473223a313736373232353630303030302c22696e676573745f7473223a313736373232353630303235302c2273657276" +
    "696365223a22617069222c22726f757465223a22474554202f61222c22737461747573223a3230302c226c6174656e63795f" +
    "6d73223a312e352c2275736572223a227531227d0a7b227473223a332c22696e676573745f7473223a342c22736572766963" +
    "65223a2277655c226972645c6e737663222c22726f757465223a22222c22737461747573223a3530332c226c6174656e6379" +
    "5f6d73223a302c2275736572223a22636166c3a9227d0a";

  it("encodes a fixed batch to the committed bytes: fields in recording order, one line per event", () => {
    const body = encodeEventBatch(golden);
    expect(body).toBe(
      '{"ts":1767225600000,"ingest_ts":1767225600250,"service":"api","route":"GET /a","status":200,"latency_ms":1.5,"user":"u1"}\n' +
        '{"ts":3,"ingest_ts":4,"service":"we\\"ird\\nsvc","route":"","status":503,"latency_ms":0,"user":"caf\u00e9"}\n',
    );
    expect(Buffer.from(body, "utf8").toString("hex")).toBe(goldenHex);
  });

  it("decodes the committed bytes to the fixed batch", () => {
    expect(decodeEventBatch(Buffer.from(goldenHex, "hex").toString("utf8"))).toEqual(golden);
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

  it("is FNV-1a 32-bit: the published test vectors (mod 2^32 is the hash itself)", () => {
    expect(partitionOf("", 2 ** 32)).toBe(0x811c9dc5);
    expect(partitionOf("a", 2 ** 32)).toBe(0xe40c292c);
    expect(partitionOf("foobar", 2 ** 32)).toBe(0xbf9cf968);
  });

  it("pins the partition of service names for P = 8 and 16 (hashing UTF-16 code units: docs/ingest.md)", () => {
    // [service, FNV-1a 32-bit, partition at P = 8, at P = 16], computed outside this code base.
    const vectors: [string, number, number, number][] = [
      ["checkout", 0x4db95739, 1, 9],
      ["search", 0x803328a9, 1, 9],
      ["payments", 0xca39f626, 6, 6],
      ["billing", 0x417000dc, 4, 12],
      ["api", 0x386aaa87, 7, 7],
      ["b", 0xe70c2de5, 5, 5],
      ["c", 0xe60c2c52, 2, 2],
      ["caf\u00e9", 0x3308be7c, 4, 12],
      ["\u{1f680}svc", 0x48857432, 2, 2],
    ];
    for (const [service, hash, p8, p16] of vectors) {
      expect([partitionOf(service, 2 ** 32), partitionOf(service, 8), partitionOf(service, 16)]).toEqual([
        hash,
        p8,
        p16,
      ]);
    }
  });
});
