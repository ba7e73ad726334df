/**
 * Idempotency that cannot lose events (docs/security.md, "Idempotency"): a retry with the same
 * key and body is stored once; the same key with another body answers 409 naming the key and
 * stores nothing; the same key from another token, or at another ingest instance that has not
 * seen it, is stored (its message id carries the token's identity and the body's hash), never
 * answered 2xx while dropped. Real nats-server, real HTTP, the stream read back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineIngestConfig, startIngest, type IngestServer } from "@tidemark/ingest";
import { messageKey, startIngestFixture, TOKEN, type IngestFixture } from "../ingest/ingest-fixture.js";

const OTHER = "second-client-token-42";
const ndjson = (service: string, n: number): string =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ service, route: "/r", latency_ms: i })).join("\n");

describe("Idempotency-Key at ingest", () => {
  let fx: IngestFixture;
  let second: IngestServer;

  beforeAll(async () => {
    fx = await startIngestFixture({ tokens: [TOKEN, OTHER] });
    second = await startIngest(
      defineIngestConfig({ port: 0, natsUrl: fx.nats.url, tokens: [TOKEN, OTHER], logLevel: "silent" }),
    );
  });
  afterAll(async () => {
    await second?.close();
    await fx?.close();
  });

  const stored = async (service: string) => (await fx.readStream()).events.filter((e) => e.service === service);

  it("stores a retry once, and answers 409 naming the key for another body under the same key", async () => {
    const first = ndjson("idem-a", 3);
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await fx.post("/v1/events", first, "application/x-ndjson", { "idempotency-key": "order-17" });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ accepted: 3 });
    }
    const other = ndjson("idem-a", 5);
    const conflict = await fx.post("/v1/events", other, "application/x-ndjson", { "idempotency-key": "order-17" });
    expect(conflict.status).toBe(409);
    const body = (await conflict.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("TM_INGEST_IDEMPOTENCY_CONFLICT");
    expect(body.error.message).toContain('Idempotency-Key "order-17" was used for a different body');
    // Only the first body is stored, once, under its own message id.
    const events = await stored("idem-a");
    expect(events.map((e) => e.latency_ms)).toEqual([0, 1, 2]);
    expect(new Set(events.map((e) => e.msgId))).toEqual(
      new Set([`${messageKey("order-17", first)}:${events[0]?.partition}`]),
    );
    const metrics = await (await fetch(`${fx.ingest.url}/metrics`)).text();
    expect(metrics).toMatch(/^tidemark_ingest_idempotency_conflicts_total 1$/m);
  });

  it("answers 409 on OTLP too, naming X-Request-Id when that named the request", async () => {
    const a = await fx.post("/v1/events", ndjson("idem-x", 1), "application/x-ndjson", { "x-request-id": "rid-9" });
    expect(a.status).toBe(200);
    const b = await fx.post("/v1/events", ndjson("idem-x", 2), "application/x-ndjson", { "x-request-id": "rid-9" });
    expect(b.status).toBe(409);
    expect(((await b.json()) as { error: { message: string } }).error.message).toContain('X-Request-Id "rid-9"');
    const t = await fetch(`${fx.ingest.url}/v1/traces`, {
      method: "POST",
      body: JSON.stringify({ resourceSpans: [] }),
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "x-request-id": "rid-9" },
    });
    expect(t.status).toBe(409);
    expect(JSON.stringify(await t.json())).toContain("TM_INGEST_IDEMPOTENCY_CONFLICT");
  });

  it("stores the same key with another body from another token, and at an instance that has not seen the key", async () => {
    const mine = ndjson("idem-b", 2);
    const theirs = ndjson("idem-b", 4);
    expect((await fx.post("/v1/events", mine, "application/x-ndjson", { "idempotency-key": "k-1" })).status).toBe(200);
    const other = await fx.post("/v1/events", theirs, "application/x-ndjson", {
      "idempotency-key": "k-1",
      authorization: `Bearer ${OTHER}`,
    });
    expect(other.status).toBe(200);
    // Another ingest instance behind the same load balancer: same token, same key, another body.
    const elsewhere = ndjson("idem-b", 6);
    const res = await fetch(`${second.url}/v1/events`, {
      method: "POST",
      body: elsewhere,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/x-ndjson", "idempotency-key": "k-1" },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ accepted: 6 });
    // Every 2xx is stored: 2 + 4 + 6 events, under three message ids.
    const events = await stored("idem-b");
    expect(events).toHaveLength(12);
    const p = events[0]?.partition;
    expect(new Set(events.map((e) => e.msgId))).toEqual(
      new Set([
        `${messageKey("k-1", mine)}:${p}`,
        `${messageKey("k-1", theirs, OTHER)}:${p}`,
        `${messageKey("k-1", elsewhere)}:${p}`,
      ]),
    );
  });
});
