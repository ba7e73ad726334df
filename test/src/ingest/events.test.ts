import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { partitionOf } from "@tidemark/engine/protocol";
import { waitFor } from "../index.js";
import { messageKey, startIngestFixture, type IngestFixture, type StreamContents } from "./ingest-fixture.js";

const SERVICES = ["checkout", "search", "auth", "catalog", "payments", "profile", "cart", "images", "ads", "mail"];

const partitionsOf = (beats: StreamContents["heartbeats"]): Set<number> => new Set(beats.map((h) => h.partition));

/** Each test has its own nats-server and ingest: what it reads back and counts is its own alone. */
describe("POST /v1/events against a real nats-server", () => {
  let fx: IngestFixture;
  beforeEach(async () => {
    fx = await startIngestFixture({ partitionCount: 4 });
  });
  afterEach(async () => {
    await fx?.close();
  });

  /** Every event this test's ingest stored. */
  async function newEvents() {
    return (await fx.readStream()).events;
  }

  it("stores NDJSON events with the right fields, one message per partition touched, partitioned by service", async () => {
    const now = Date.now();
    const sent = SERVICES.map((service, i) => ({
      ts: now - i * 1000,
      service,
      route: `/api/${service}?q=${i}`,
      status: 200 + i * 40,
      latency_ms: i + 0.5,
      user: `u${i}`,
    }));
    const body = sent.map((e) => JSON.stringify(e)).join("\n") + "\n";
    const res = await fx.post("/v1/events", body, "application/x-ndjson", { "idempotency-key": "req-ndjson-1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("req-ndjson-1");
    expect(await res.json()).toEqual({ accepted: 10, rejected: 0, clamped: 0, errors: [] });
    const stored = await newEvents();
    expect(stored).toHaveLength(10);
    for (const s of sent) {
      const got = stored.find((e) => e.service === s.service);
      expect(got).toMatchObject({
        ts: s.ts,
        service: s.service,
        route: `/api/${s.service}`,
        status: s.status,
        latency_ms: s.latency_ms,
        user: s.user,
      });
      expect(got?.partition).toBe(partitionOf(s.service, 4));
      expect(got?.msgId).toBe(`${messageKey("req-ndjson-1", body)}:${got?.partition}`);
      expect(got?.ingest_ts).toBeGreaterThanOrEqual(now);
    }
    expect(new Set(stored.map((e) => e.msgId)).size).toBe(new Set(sent.map((s) => partitionOf(s.service, 4))).size);
  });

  it("splits a large partition group into messages by event position, and a retry with the same key stores nothing twice", async () => {
    const body = Array.from({ length: 2500 }, (_, i) =>
      JSON.stringify({ service: "bulk", route: "/r/" + "x".repeat(200), latency_ms: i }),
    ).join("\n");
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await fx.post("/v1/events", body, "application/x-ndjson", { "x-request-id": "bulk-1" });
      expect(await res.json()).toMatchObject({ accepted: 2500 });
    }
    const stored = await newEvents();
    expect(stored.map((e) => e.latency_ms)).toEqual(Array.from({ length: 2500 }, (_, i) => i));
    const p = partitionOf("bulk", 4);
    const key = messageKey("bulk-1", body);
    expect([...new Set(stored.map((e) => e.msgId))]).toEqual([`${key}:${p}:0`, `${key}:${p}:1000`, `${key}:${p}:2000`]);
  });

  it("halves a message that would exceed the server's max_payload, keeping ids by event position", async () => {
    // A route and a user of 254 characters, 3 bytes of UTF-8 each, distinct per event (the compact
    // batch stores a repeated string once, docs/decisions/0012-batched-transport.md): ~1.5 KB per
    // event, 1000 events ≈ 1.5 MB > 1 MiB, so the message is halved: two messages of 500 events.
    const wide = (c: string, i: number): string => c.repeat(250) + String(i).padStart(4, "0");
    const body = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({ service: "wide", route: wide("\u0800", i), user: wide("\u0801", i), latency_ms: i }),
    ).join("\n");
    const res = await fx.post("/v1/events", body, "application/x-ndjson", { "x-request-id": "wide-1" });
    expect(await res.json()).toMatchObject({ accepted: 1000 });
    const stored = await newEvents();
    expect(stored.map((e) => e.latency_ms)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(stored.every((e, i) => e.route === wide("\u0800", i) && e.user === wide("\u0801", i))).toBe(true);
    const p = partitionOf("wide", 4);
    const ids = [...new Set(stored.map((e) => e.msgId))];
    expect(ids).toEqual([0, 500].map((offset) => `${messageKey("wide-1", body)}:${p}:${offset}`));
  });

  it("accepts a JSON array, { events: [...] }, RFC 3339 ts and gzip; ignores unknown fields", async () => {
    const iso = new Date(Date.now() - 5000).toISOString();
    const a = await fx.post(
      "/v1/events",
      JSON.stringify([{ ts: iso, service: "arr", extra: { deep: 1 } }]),
      "application/json",
    );
    expect(a.status).toBe(200);
    const b = await fx.post(
      "/v1/events",
      JSON.stringify({ events: [{ service: "obj", status: 503 }] }),
      "application/json; charset=utf-8",
    );
    expect(b.status).toBe(200);
    const gz = gzipSync(
      Buffer.from(
        Array.from({ length: 500 }, (_, i) => JSON.stringify({ service: `gz${i % 7}`, latency_ms: i })).join("\n"),
      ),
    );
    const c = await fx.post("/v1/events", gz, "application/x-ndjson", { "content-encoding": "gzip" });
    expect(await c.json()).toMatchObject({ accepted: 500, rejected: 0 });
    const stored = await newEvents();
    expect(stored).toHaveLength(502);
    expect(stored.find((e) => e.service === "arr")).toMatchObject({
      ts: Date.parse(iso),
      route: "",
      status: 200,
      latency_ms: 0,
      user: "",
    });
    const obj = stored.find((e) => e.service === "obj");
    expect(obj?.status).toBe(503);
    expect(obj?.ts).toBe(obj?.ingest_ts);
    expect(
      stored
        .filter((e) => e.service.startsWith("gz"))
        .map((e) => e.latency_ms)
        .sort((x, y) => x - y),
    ).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it("reports bad records per record, clamps future ts, rejects too-old ts, and stores only the good ones", async () => {
    const now = Date.now();
    const lines = [
      JSON.stringify({ service: "ok", ts: now }),
      JSON.stringify({ service: "future", ts: now + 3_600_000 }),
      JSON.stringify({ service: "old", ts: now - 2 * 86_400_000 }),
      JSON.stringify({ service: "secs", ts: Math.floor(now / 1000) }),
      JSON.stringify({ service: "", ts: now }),
      JSON.stringify({ service: "x".repeat(257) }),
      JSON.stringify({ service: "neg", latency_ms: -1 }),
      JSON.stringify({ service: "st", status: "500" }),
      "{not json",
      JSON.stringify([1, 2]),
    ];
    const res = await fx.post("/v1/events", lines.join("\n"), "application/x-ndjson");
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      accepted: number;
      rejected: number;
      clamped: number;
      errors: { index: number; field: string; message: string }[];
    };
    expect(body).toMatchObject({ accepted: 2, rejected: 8, clamped: 1 });
    expect(body.errors.map((e) => [e.index, e.field])).toEqual([
      [2, "ts"],
      [3, "ts"],
      [4, "service"],
      [5, "service"],
      [6, "latency_ms"],
      [7, "status"],
      [8, "(line 9)"],
      [9, "(record)"],
    ]);
    expect(body.errors[1]?.message).toMatch(/looks like seconds/);
    expect(body.errors[3]?.message).toMatch(/at most 256/);
    const stored = await newEvents();
    expect(stored.map((e) => e.service).sort()).toEqual(["future", "ok"]);
    const future = stored.find((e) => e.service === "future");
    expect(future?.ts).toBe(future?.ingest_ts);
    const metrics = await (await fetch(fx.ingest.url + "/metrics")).text();
    expect(metrics).toMatch(/tidemark_ingest_events_clamped_total\{reason="future_skew"\} 1/);
    expect(metrics).toMatch(/tidemark_ingest_events_rejected_total\{endpoint="events",reason="too_old"\} 2/);
  });

  it("answers 400 with the same shape when no event is valid, and publishes nothing", async () => {
    const res = await fx.post("/v1/events", JSON.stringify([{ route: "/x" }, { service: 5 }]), "application/json");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      accepted: 0,
      rejected: 2,
      errors: [
        { index: 0, field: "service" },
        { index: 1, field: "service" },
      ],
    });
    expect(await newEvents()).toHaveLength(0);
  });

  it("refuses whole requests with clear codes: 401, 415, 400 (JSON offset, UTF-8, gzip), 413 (body, event count)", async () => {
    const noAuth = await fetch(fx.ingest.url + "/v1/events", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await fx.post("/v1/events", "{}", "application/json", { authorization: "Bearer nope-nope-nope" });
    expect(wrong.status).toBe(401);
    // Auth comes first: an unauthenticated client learns nothing about what else is wrong.
    const csv = await fetch(fx.ingest.url + "/v1/events", {
      method: "POST",
      body: "a,b",
      headers: { "content-type": "text/csv" },
    });
    expect(csv.status).toBe(401);
    const cases: [string | Uint8Array, string, Record<string, string>, number, string, RegExp][] = [
      ["a,b", "text/csv", {}, 415, "TM_INGEST_UNSUPPORTED_MEDIA_TYPE", /x-ndjson/],
      ['[{"service": "a"}, {', "application/json", {}, 400, "TM_INGEST_BAD_JSON", /position|JSON/],
      ['{"x": 1}', "application/json", {}, 400, "TM_INGEST_BAD_SHAPE", /events/],
      [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), "application/x-ndjson", {}, 400, "TM_INGEST_BAD_UTF8", /UTF-8/],
      [
        gzipSync("{}").subarray(0, 10),
        "application/json",
        { "content-encoding": "gzip" },
        400,
        "TM_INGEST_BAD_GZIP",
        /gzip/,
      ],
      ["{}", "application/json", { "content-encoding": "br" }, 415, "TM_INGEST_UNSUPPORTED_ENCODING", /gzip/],
      [
        gzipSync(Buffer.alloc(17 * 1024 * 1024, 0x20)),
        "application/json",
        { "content-encoding": "gzip" },
        413,
        "TM_INGEST_BODY_TOO_LARGE",
        /16777216/,
      ],
      [
        "\n".repeat(10) + '{"service":"a"}\n'.repeat(100_001),
        "application/x-ndjson",
        {},
        413,
        "TM_INGEST_TOO_MANY_EVENTS",
        /100000/,
      ],
      [
        "{}",
        "application/json",
        { "idempotency-key": "has space" },
        400,
        "TM_INGEST_BAD_REQUEST_ID",
        /idempotency-key/,
      ],
    ];
    for (const [body, type, headers, status, code, message] of cases) {
      const res = await fx.post("/v1/events", body, type, headers);
      expect({ status: res.status, code }).toEqual({ status, code });
      const json = (await res.json()) as { error: { code: string; message: string } };
      expect(json.error.code).toBe(code);
      expect(json.error.message).toMatch(message);
    }
    expect(await newEvents()).toHaveLength(0);
  });

  it("serves /healthz, /readyz and /metrics; heartbeats reach every partition with a monotonic ingest_ts", async () => {
    expect((await fetch(fx.ingest.url + "/healthz")).status).toBe(200);
    expect(await (await fetch(fx.ingest.url + "/readyz")).json()).toEqual({ ready: true });
    const metrics = await (await fetch(fx.ingest.url + "/metrics")).text();
    for (const name of [
      "tidemark_ingest_events_accepted_total",
      "tidemark_ingest_request_duration_seconds",
      "tidemark_ingest_publish_latency_seconds",
      "tidemark_ingest_batch_events",
      "tidemark_ingest_in_flight_bytes",
    ])
      expect(metrics).toContain(name);
    // Records and heartbeats interleaved: three requests of 10 services x 40 events, each followed
    // by a heartbeat on every partition (heartbeats come every second).
    for (let round = 0; round < 3; round++) {
      const body = Array.from({ length: 400 }, (_, i) =>
        JSON.stringify({ service: SERVICES[i % SERVICES.length], latency_ms: round * 400 + i }),
      ).join("\n");
      expect(await (await fx.post("/v1/events", body, "application/x-ndjson")).json()).toMatchObject({
        accepted: 400,
      });
      // The records are stored (acked) when the response comes: later heartbeats follow them in the log.
      const before = (await fx.readStream()).heartbeats.length;
      await waitFor(
        async () => partitionsOf((await fx.readStream()).heartbeats.slice(before)).size === 4,
        20_000,
        "a heartbeat on every partition after the request",
      );
    }
    const { heartbeats, log, events } = await fx.readStream();
    expect(new Set(heartbeats.map((h) => h.partition))).toEqual(new Set([0, 1, 2, 3]));
    expect(events).toHaveLength(1200);
    expect(events.map((e) => e.latency_ms).sort((a, b) => a - b)).toEqual(Array.from({ length: 1200 }, (_, i) => i));
    // Per partition, ingest_ts never goes backwards in log order (records and heartbeats alike).
    const last = new Map<number, number>();
    for (const m of log) {
      expect(m.ingestTs).toBeGreaterThanOrEqual(last.get(m.partition) ?? 0);
      last.set(m.partition, m.ingestTs);
    }
  });
});
