/**
 * Backpressure and failure paths against a real nats-server: in-flight bytes over the limit → 429 +
 * Retry-After (never unbounded buffering); TM_EVENTS deleted under a running ingest → 503, then
 * recreated and the retry accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { waitFor } from "../index.js";
import { TOKEN, inFlightBytes, startIngestFixture, streamingPost, type IngestFixture } from "./ingest-fixture.js";

describe("ingest backpressure", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture({ maxInFlightBytes: 64 * 1024, retryAfterS: 2 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("answers 429 with Retry-After while a slow body holds the in-flight budget, then accepts again", async () => {
    const line = (i: number) => JSON.stringify({ service: "bp", user: `u${i}`, route: "/r/" + "x".repeat(100) }) + "\n";
    const slow = new TextEncoder().encode(Array.from({ length: 400 }, (_, i) => line(i)).join(""));
    expect(slow.length).toBeGreaterThan(48 * 1024);
    const { push, response: held } = streamingPost(fx.ingest.url + "/v1/events", {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/x-ndjson",
      "idempotency-key": "slow-1",
    });
    push(slow.subarray(0, 40 * 1024));
    const inFlight = () => inFlightBytes(fx.ingest.url);
    await waitFor(async () => (await inFlight()) >= 40 * 1024, 10_000, "40 KiB held in flight");

    const other = Array.from({ length: 300 }, (_, i) => line(1000 + i)).join("");
    const refused = await fx.post("/v1/events", other, "application/x-ndjson");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("2");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("TM_INGEST_OVERLOADED");

    push(slow.subarray(40 * 1024));
    push();
    expect(await (await held).json()).toMatchObject({ accepted: 400 });
    expect(await inFlight()).toBe(0);
    const retried = await fx.post("/v1/events", other, "application/x-ndjson");
    expect(await retried.json()).toMatchObject({ accepted: 300 });
    const { events } = await fx.readStream();
    expect(events.filter((e) => e.service === "bp")).toHaveLength(700);
  });
});

describe("ingest when a client aborts mid-body", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("frees the request's in-flight bytes, stores nothing of it, and keeps serving", async () => {
    const abort = new AbortController();
    const { push, response } = streamingPost(
      fx.ingest.url + "/v1/events",
      { authorization: `Bearer ${TOKEN}`, "content-type": "application/x-ndjson" },
      abort.signal,
    );
    response.catch(() => undefined);
    push(new TextEncoder().encode(JSON.stringify({ service: "aborted" }) + "\n" + "x".repeat(30_000)));
    await waitFor(async () => (await inFlightBytes(fx.ingest.url)) > 0, 10_000, "the body to be arriving");
    abort.abort();
    await waitFor(async () => (await inFlightBytes(fx.ingest.url)) === 0, 10_000, "in-flight bytes released");
    expect((await fx.post("/v1/events", JSON.stringify({ service: "after" }), "application/x-ndjson")).status).toBe(
      200,
    );
    const { events } = await fx.readStream();
    expect(events.map((e) => e.service)).toEqual(["after"]);
  });
});

describe("ingest when TM_EVENTS disappears", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture({ ackTimeoutMs: "1s" });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("answers 503 while the stream is gone, recreates it as at start, and accepts the retry", async () => {
    const body = JSON.stringify({ service: "gone" });
    expect((await fx.post("/v1/events", body, "application/x-ndjson")).status).toBe(200);
    const jsm = await jetstreamManager(fx.nc);
    await jsm.streams.delete("TM_EVENTS");
    const failed = await fx.post("/v1/events", body, "application/x-ndjson", { "idempotency-key": "after-delete" });
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("1");
    await waitFor(
      async () => (await fetch(fx.ingest.url + "/readyz")).status === 200,
      10_000,
      "/readyz after the stream is recreated",
    );
    expect(
      (await fx.post("/v1/events", body, "application/x-ndjson", { "idempotency-key": "after-delete" })).status,
    ).toBe(200);
    const { events } = await fx.readStream();
    expect(events.filter((e) => e.service === "gone")).toHaveLength(1);
  });
});
