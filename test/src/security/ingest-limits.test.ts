/**
 * Ingest that cannot be starved (docs/security.md, "Ingest limits"): a stalled body answers 408
 * and gives its bytes back, one token's concurrency and rate cannot crowd out another's, skipped
 * OTLP spans count toward the record cap. Each limit is answered with its code and counted in
 * /metrics. Real nats-server, real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { waitFor } from "../index.js";
import {
  inFlightBytes,
  startIngestFixture,
  streamingPost,
  TOKEN,
  type IngestFixture,
} from "../ingest/ingest-fixture.js";

const OTHER = "another-client-token-7";
const event = JSON.stringify({ service: "limits", route: "/r" });

async function metric(url: string, line: RegExp): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(line.exec(text)?.[1] ?? NaN);
}

describe("ingest limits", () => {
  let fx: IngestFixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  it("answers 408 to a body that stalls, releases its bytes, and serves other writers meanwhile", async () => {
    fx = await startIngestFixture({ bodyIdleTimeoutMs: "500ms" });
    const f = fx;
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/x-ndjson",
      "content-length": "100000",
    };
    const stalled = streamingPost(`${f.ingest.url}/v1/events`, headers);
    stalled.push(new Uint8Array(50_000).fill(0x20));
    await waitFor(async () => (await inFlightBytes(f.ingest.url)) === 50_000, 10_000, "the stalled bytes held");
    expect((await f.post("/v1/events", event, "application/x-ndjson")).status).toBe(200);
    const started = Date.now();
    const res = await stalled.response;
    expect(res.status).toBe(408);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("TM_INGEST_BODY_TIMEOUT");
    expect(await inFlightBytes(f.ingest.url)).toBe(0);
    expect(await metric(f.ingest.url, /^tidemark_ingest_limited_total\{limit="body_idle"\} (\d+)$/m)).toBe(1);
  });

  it("limits requests in flight per token: a third from one token is refused, another token still writes", async () => {
    fx = await startIngestFixture({ tokens: [TOKEN, OTHER], tokenConcurrency: 2, bodyIdleTimeoutMs: "30s" });
    const f = fx;
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/x-ndjson" };
    const open = [
      streamingPost(`${f.ingest.url}/v1/events`, headers),
      streamingPost(`${f.ingest.url}/v1/events`, headers),
    ];
    for (const o of open) o.push(new TextEncoder().encode(event + "\n"));
    await waitFor(async () => (await inFlightBytes(f.ingest.url)) > 0, 10_000, "both requests in flight");
    await waitFor(
      async () => (await inFlightBytes(f.ingest.url)) === 2 * (event.length + 1),
      10_000,
      "both bodies being read",
    );
    const third = await f.post("/v1/events", event, "application/x-ndjson");
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("1");
    const body = (await third.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "TM_INGEST_RATE_LIMITED" });
    expect(body.error.message).toContain("2 requests of this token are in flight (tokenConcurrency)");
    expect(
      (await f.post("/v1/events", event, "application/x-ndjson", { authorization: `Bearer ${OTHER}` })).status,
    ).toBe(200);
    for (const o of open) o.push();
    for (const o of open) expect((await o.response).status).toBe(200);
    // Released: the token writes again.
    expect((await f.post("/v1/events", event, "application/x-ndjson")).status).toBe(200);
    expect(await metric(f.ingest.url, /^tidemark_ingest_limited_total\{limit="concurrency"\} (\d+)$/m)).toBe(1);
  });

  it("limits requests per second per token, and one token's limit leaves another's alone", async () => {
    fx = await startIngestFixture({ tokens: [TOKEN, OTHER], tokenRate: 5 });
    const f = fx;
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await f.post("/v1/events", event, "application/x-ndjson")).status);
    const elapsedS = (Date.now() - started) / 1000;
    const ok = statuses.filter((s) => s === 200).length;
    // A bucket of 5, refilled at 5/s: at most 5 + 5 × elapsed pass; the rest are 429.
    expect(ok).toBeGreaterThanOrEqual(5);
    expect(ok).toBeLessThanOrEqual(5 + Math.floor(5 * elapsedS));
    expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    expect(statuses.length - ok).toBeGreaterThan(0);
    const other = await f.post("/v1/events", event, "application/x-ndjson", { authorization: `Bearer ${OTHER}` });
    expect(other.status).toBe(200);
    expect(await metric(f.ingest.url, /^tidemark_ingest_limited_total\{limit="rate"\} (\d+)$/m)).toBe(12 - ok);
  });

  it("counts skipped OTLP spans toward the record cap (413)", async () => {
    fx = await startIngestFixture({ maxEventsPerRequest: 100 });
    const span = (i: number) => ({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: (i + 1).toString(16).padStart(16, "0"),
      parentSpanId: "b7ad6b7169203331",
      name: "SELECT",
      kind: 3,
      startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
      endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
    });
    const body = (n: number) =>
      JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: "service.name", value: { stringValue: "limits" } }] },
            scopeSpans: [{ spans: Array.from({ length: n }, (_, i) => span(i)) }],
          },
        ],
      });
    const within = await fx.post("/v1/traces", body(100), "application/json");
    expect(within.status).toBe(200);
    const over = await fx.post("/v1/traces", body(101), "application/json");
    expect(over.status).toBe(413);
    expect(JSON.stringify(await over.json())).toContain("TM_INGEST_TOO_MANY_EVENTS");
  });

  it("counts the spans of an OTLP protobuf before decoding it: a body of skipped child spans past the cap is 413", async () => {
    fx = await startIngestFixture({ maxEventsPerRequest: 1000 });
    const mem = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "limits" }),
      spanProcessors: [new SimpleSpanProcessor(mem)],
    });
    const tracer = provider.getTracer("limits-test");
    const parent = tracer.startSpan("GET /x", { kind: SpanKind.SERVER });
    const inside = trace.setSpan(context.active(), parent);
    for (let i = 0; i < 1000; i++) tracer.startSpan("SELECT", { kind: SpanKind.CLIENT }, inside).end();
    await provider.forceFlush();
    const children = mem.getFinishedSpans();
    const post = (n: number) =>
      fx!.post(
        "/v1/traces",
        ProtobufTraceSerializer.serializeRequest(children.slice(0, n)) as Uint8Array,
        "application/x-protobuf",
      );
    expect((await post(1000)).status).toBe(200);
    expect((await post(1000)).status).toBe(200); // the same 1000 again (no key): at the cap, not past it
    mem.reset();
    tracer.startSpan("SELECT", { kind: SpanKind.CLIENT }, inside).end();
    await provider.forceFlush();
    children.push(...mem.getFinishedSpans());
    const past = await post(1001);
    expect(past.status).toBe(413);
    expect(past.headers.get("content-type")).toMatch(/^application\/x-protobuf/);
    expect(await metric(fx.ingest.url, /^tidemark_ingest_spans_skipped_total (\d+)$/m)).toBe(2000);
  });
});
