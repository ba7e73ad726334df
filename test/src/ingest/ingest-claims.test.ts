/**
 * Claims of docs/ingest.md not checked elsewhere: without a key ingest generates a request id,
 * returns it in `X-Request-Id` and derives the TM_EVENTS message ids from it (so a retry without a
 * key is stored twice); `application/ndjson` and `application/jsonl` are NDJSON; `null` counts as
 * absent; at most 100 per-record errors are reported; a request with no valid event is 400
 * `TM_INGEST_NO_VALID_EVENTS` and stores nothing. In-process ingest on a real nats-server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { partitionOf } from "@tidemark/engine/protocol";
import { messageKey, startIngestFixture, type IngestFixture, type StoredEvent } from "./ingest-fixture.js";

const P = 4;

interface Summary {
  accepted: number;
  rejected: number;
  clamped: number;
  errors: Array<{ index: number; field: string; message: string }>;
  error?: { code: string; message: string };
}

describe("ingest claims of docs/ingest.md", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture({ partitionCount: P });
  });
  afterAll(() => fx?.close());

  async function storedOf(service: string): Promise<StoredEvent[]> {
    return (await fx.readStream()).events.filter((e) => e.service === service);
  }

  const ndjson = (events: object[]): string => events.map((e) => JSON.stringify(e)).join("\n");

  it("generates a request id when none is sent, returns it and derives the message ids from it", async () => {
    const body = ndjson([{ service: "gen-a" }, { service: "gen-b" }, { service: "gen-a" }]);
    const first = await fx.post("/v1/events", body, "application/x-ndjson");
    const second = await fx.post("/v1/events", body, "application/x-ndjson");
    expect([first.status, second.status]).toEqual([200, 200]);
    const ids = [first.headers.get("x-request-id"), second.headers.get("x-request-id")];
    for (const id of ids) expect(id).toMatch(/^[\x21-\x7e]{1,128}$/);
    expect(ids[0]).not.toBe(ids[1]);
    // Each request's messages: `<request id>:<token identity>:<body hash>:<partition>`, one per partition touched.
    const stored = [...(await storedOf("gen-a")), ...(await storedOf("gen-b"))];
    const expected = ids.flatMap((id) =>
      [...new Set(["gen-a", "gen-b"].map((s) => partitionOf(s, P)))].map((p) => `${messageKey(String(id), body)}:${p}`),
    );
    expect([...new Set(stored.map((e) => e.msgId))].sort()).toEqual(expected.sort());
    // So the same body sent twice without a key is stored twice.
    expect(stored).toHaveLength(6);
    // A client's X-Request-Id is used as given; Idempotency-Key wins over it.
    const own = await fx.post("/v1/events", ndjson([{ service: "gen-c" }]), "application/x-ndjson", {
      "x-request-id": "client-req-7",
    });
    expect(own.headers.get("x-request-id")).toBe("client-req-7");
    const both = await fx.post("/v1/events", ndjson([{ service: "gen-d" }]), "application/x-ndjson", {
      "x-request-id": "client-req-8",
      "idempotency-key": "key-8",
    });
    expect(both.headers.get("x-request-id")).toBe("key-8");
    expect((await storedOf("gen-c")).map((e) => e.msgId)).toEqual([
      `${messageKey("client-req-7", ndjson([{ service: "gen-c" }]))}:${partitionOf("gen-c", P)}`,
    ]);
    expect((await storedOf("gen-d")).map((e) => e.msgId)).toEqual([
      `${messageKey("key-8", ndjson([{ service: "gen-d" }]))}:${partitionOf("gen-d", P)}`,
    ]);
  });

  it("reads application/ndjson and application/jsonl as NDJSON", async () => {
    for (const type of ["application/ndjson", "application/jsonl", "application/jsonl; charset=utf-8"]) {
      const service = `ct-${type.replace(/\W+/g, "-")}`;
      const res = await fx.post(
        "/v1/events",
        ndjson([
          { service, status: 503 },
          { service, latency_ms: 7 },
        ]),
        type,
      );
      expect([type, res.status, await res.json()]).toEqual([
        type,
        200,
        { accepted: 2, rejected: 0, clamped: 0, errors: [] },
      ]);
      expect((await storedOf(service)).map((e) => [e.status, e.latency_ms])).toEqual([
        [503, 0],
        [200, 7],
      ]);
    }
    const refused = await fx.post("/v1/events", ndjson([{ service: "ct-text" }]), "text/plain");
    expect(refused.status).toBe(415);
  });

  it("treats null as absent: the default applies, and a required field is missing", async () => {
    const absent = { ts: null, route: null, status: null, latency_ms: null, user: null };
    const before = Date.now();
    for (const [type, body] of [
      [
        "application/x-ndjson",
        ndjson([
          { service: "nul-nd", ...absent },
          { service: null, route: "/x" },
        ]),
      ],
      [
        "application/json",
        JSON.stringify([
          { service: "nul-js", ...absent },
          { service: null, route: "/x" },
        ]),
      ],
    ] as const) {
      const res = await fx.post("/v1/events", body, type);
      const summary = (await res.json()) as Summary;
      expect([res.status, summary.accepted, summary.rejected], type).toEqual([200, 1, 1]);
      expect(
        summary.errors.map((e) => [e.index, e.field]),
        type,
      ).toEqual([[1, "service"]]);
      expect(summary.errors[0]?.message, type).toContain("required");
    }
    for (const service of ["nul-nd", "nul-js"]) {
      const [e] = await storedOf(service);
      expect(e).toMatchObject({ route: "", status: 200, latency_ms: 0, user: "" });
      expect(e?.ts).toBe(e?.ingest_ts);
      expect(e?.ts).toBeGreaterThanOrEqual(before);
    }
  });

  it("reports the first 100 per-record errors and counts every rejected record", async () => {
    const bad = Array.from({ length: 150 }, (_, i) => ({ service: `cap-${i}`, status: "nope" }));
    const res = await fx.post("/v1/events", JSON.stringify([...bad, { service: "cap-ok" }]), "application/json");
    const summary = (await res.json()) as Summary;
    expect([res.status, summary.accepted, summary.rejected]).toEqual([200, 1, 150]);
    expect(summary.errors.map((e) => e.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(new Set(summary.errors.map((e) => e.field))).toEqual(new Set(["status"]));
    expect(await storedOf("cap-ok")).toHaveLength(1);
  });

  it("answers 400 TM_INGEST_NO_VALID_EVENTS with the summary when no event is valid, and stores nothing", async () => {
    const before = await fx.readStream();
    const allBad = Array.from({ length: 120 }, (_, i) => ({ service: `none-${i}`, latency_ms: -1 }));
    const cases: Array<[string, string, number]> = [
      [JSON.stringify(allBad), "application/json", 120],
      [ndjson([{ route: "/no-service" }]), "application/x-ndjson", 1],
      ["", "application/x-ndjson", 0],
    ];
    for (const [body, type, rejected] of cases) {
      const res = await fx.post("/v1/events", body, type);
      const summary = (await res.json()) as Summary;
      expect([res.status, summary.accepted, summary.rejected, summary.error?.code], body.slice(0, 40)).toEqual([
        400,
        0,
        rejected,
        "TM_INGEST_NO_VALID_EVENTS",
      ]);
      expect(summary.errors).toHaveLength(Math.min(rejected, 100));
      expect(summary.error?.message).toMatch(/no event/);
    }
    // Every message stored meanwhile is a heartbeat.
    const after = await fx.readStream();
    expect(after.events).toHaveLength(before.events.length);
    expect(after.messages - before.messages).toBe(after.heartbeats.length - before.heartbeats.length);
  });
});
