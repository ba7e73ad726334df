/**
 * A real client nobody here wrote: the OpenTelemetry JS SDK (sdk-trace-base 2.12 with the
 * OTLP/HTTP JSON and protobuf exporters 0.223) exports spans to ingest; every server or root span
 * must arrive in TM_EVENTS as an event with the right status, route, latency and service.
 */
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter as OTLPJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OTLPProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { serverSpans } from "./otlp-spans.js";
import { TOKEN, startIngestFixture, type IngestFixture, type StoredEvent } from "./ingest-fixture.js";

/** Emits the same four spans through `exporter`; returns their expected events (the client span is not one). */
async function emitSpans(
  exporter: SpanExporter,
  service: string,
  startMs: number,
): Promise<Omit<StoredEvent, "ingest_ts" | "partition" | "msgId">[]> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("ingest-test");
  const server = tracer.startSpan("GET /users/:id", {
    kind: SpanKind.SERVER,
    startTime: startMs,
    attributes: { "http.route": "/users/:id?debug=1", "http.response.status_code": 404, "enduser.id": "alice" },
  });
  server.end(startMs + 12.5);
  const failed = tracer.startSpan("POST /pay", { kind: SpanKind.SERVER, startTime: startMs + 100 });
  failed.setStatus({ code: SpanStatusCode.ERROR, message: "boom" });
  failed.end(startMs + 350);
  const root = tracer.startSpan("nightly-job", {
    startTime: startMs + 200,
    attributes: { "http.status_code": 201, "user.id": "bob" },
  });
  root.end(startMs + 1200);
  // A client span with a parent: neither server nor root, so not an event.
  const parent = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: 1,
    isRemote: true,
  };
  const { trace, context } = await import("@opentelemetry/api");
  const child = tracer.startSpan(
    "SELECT",
    { kind: SpanKind.CLIENT, startTime: startMs + 1 },
    trace.setSpanContext(context.active(), parent),
  );
  child.end(startMs + 2);
  await provider.forceFlush();
  await provider.shutdown();
  return [
    { service, route: "/users/:id", status: 404, latency_ms: 12.5, user: "alice", ts: Math.trunc(startMs + 12.5) },
    { service, route: "POST /pay", status: 500, latency_ms: 250, user: "", ts: Math.trunc(startMs + 350) },
    { service, route: "nightly-job", status: 201, latency_ms: 1000, user: "bob", ts: Math.trunc(startMs + 1200) },
  ];
}

describe("OTLP/HTTP traces from the OpenTelemetry JS SDK", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  const headers = { Authorization: `Bearer ${TOKEN}` };
  const variants: [string, (url: string) => SpanExporter][] = [
    ["otlp-http-json", (url) => new OTLPJsonExporter({ url, headers })],
    ["otlp-http-json-gzip", (url) => new OTLPJsonExporter({ url, headers, compression: "gzip" as never })],
    ["otlp-proto", (url) => new OTLPProtoExporter({ url, headers })],
    ["otlp-proto-gzip", (url) => new OTLPProtoExporter({ url, headers, compression: "gzip" as never })],
  ];

  for (const [name, make] of variants) {
    it(`${name}: every server and root span lands as an event with status, route, latency, user and service`, async () => {
      const startMs = Date.now() - 60_000 + 0.25;
      const expected = await emitSpans(make(fx.ingest.url + "/v1/traces"), `svc-${name}`, startMs);
      const got = (await fx.readStream()).events.filter((e) => e.service === `svc-${name}`);
      expect(got).toHaveLength(expected.length);
      for (const want of expected) {
        const e = got.find((g) => g.route === want.route);
        expect(e, want.route).toBeDefined();
        expect({ ...e, latency_ms: undefined }).toMatchObject({ ...want, latency_ms: undefined });
        expect(e?.latency_ms).toBeCloseTo(want.latency_ms, 3);
      }
    });
  }

  it("reports spans it refuses in partialSuccess.rejectedSpans, in the request's content type", async () => {
    const now = Date.now();
    const spans = await serverSpans("partial", [now - 1000, now - 3 * 86_400_000, now - 2000]);
    const proto = ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array;
    const res = await fx.post("/v1/traces", proto, "application/x-protobuf");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/x-protobuf/);
    const decoded = ProtobufTraceSerializer.deserializeResponse(new Uint8Array(await res.arrayBuffer()));
    expect(Number(decoded.partialSuccess?.rejectedSpans)).toBe(1);
    expect(decoded.partialSuccess?.errorMessage).toMatch(/older than the max age/);

    const json = JsonTraceSerializer.serializeRequest(spans) as Uint8Array;
    const res2 = await fx.post("/v1/traces", gzipSync(json), "application/json", { "content-encoding": "gzip" });
    expect(res2.status).toBe(200);
    expect(res2.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res2.json()) as { partialSuccess: { rejectedSpans: string } };
    expect(Number(body.partialSuccess.rejectedSpans)).toBe(1);
    expect((await fx.readStream()).events.filter((e) => e.service === "partial")).toHaveLength(4);

    const ok = await fx.post(
      "/v1/traces",
      JsonTraceSerializer.serializeRequest(await serverSpans("whole", [now])) as Uint8Array,
      "application/json",
    );
    expect(await ok.json()).toEqual({});
  });

  it("accepts OTLP/JSON int64 as numbers or strings and refuses bad requests with non-retryable codes", async () => {
    const now = Date.now();
    const span = (start: number | string, end: number | string) => ({
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "hand" } }] },
          scopeSpans: [
            {
              spans: [
                {
                  name: "GET /h",
                  kind: 2,
                  startTimeUnixNano: start,
                  endTimeUnixNano: end,
                  attributes: [{ key: "http.response.status_code", value: { intValue: "503" } }],
                },
              ],
            },
          ],
        },
      ],
    });
    const a = await fx.post("/v1/traces", JSON.stringify(span(now * 1e6, (now + 7) * 1e6)), "application/json");
    const b = await fx.post(
      "/v1/traces",
      JSON.stringify(span(String(BigInt(now) * 1_000_000n), String(BigInt(now + 9) * 1_000_000n))),
      "application/json",
    );
    expect([a.status, b.status]).toEqual([200, 200]);
    const hand = (await fx.readStream()).events.filter((e) => e.service === "hand");
    expect(hand.map((e) => [e.status, e.latency_ms])).toEqual([
      [503, 7],
      [503, 9],
    ]);

    const valid = ProtobufTraceSerializer.serializeRequest(await serverSpans("bad", [now])) as Uint8Array;
    const corrupt = await fx.post("/v1/traces", valid.subarray(0, valid.length - 1), "application/x-protobuf");
    expect(corrupt.status).toBe(400);
    expect(corrupt.headers.get("content-type")).toMatch(/^application\/x-protobuf/);
    expect((await fx.post("/v1/traces", "x", "text/plain")).status).toBe(415);
    const unauth = await fetch(fx.ingest.url + "/v1/traces", {
      method: "POST",
      body: valid,
      headers: { "content-type": "application/x-protobuf" },
    });
    expect(unauth.status).toBe(401);
    expect((await fx.readStream()).events.filter((e) => e.service === "bad")).toHaveLength(0);
  });
});
