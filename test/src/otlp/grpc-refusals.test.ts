/**
 * A raw grpc-js client tries what a client should not send (docs/ingest.md, "OTLP/gRPC"):
 * malformed protobuf, an oversized message (plain and as a gzip bomb), a wrong or missing token,
 * a deadline that runs out; each gets its status, never with retry info, and nothing is stored.
 * Retryable refusals (RESOURCE_EXHAUSTED by the token's rate, UNAVAILABLE without NATS) carry
 * google.rpc.RetryInfo. Refused spans and skipped log records are told in partial success.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { status } from "@grpc/grpc-js";
import { SeverityNumber } from "@opentelemetry/api-logs";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { startIngestFixture, type IngestFixture } from "../ingest/ingest-fixture.js";
import { serverSpans } from "../ingest/otlp-spans.js";
import { LOGS_EXPORT, TRACE_EXPORT, closeClients, grpcClient, retryDelayS, unary } from "./grpc-client.js";

const LIMIT = 256 * 1024;

async function traceRequest(service: string, startMs: readonly number[]): Promise<Uint8Array> {
  return ProtobufTraceSerializer.serializeRequest(await serverSpans(service, startMs)) as Uint8Array;
}

/** Stored events of `service`, read after a sentinel request of `sentinel` is stored (so any stray publish would be too). */
async function storedAfterSentinel(fx: IngestFixture, service: string, sentinel: string): Promise<number> {
  const ok = await unary(grpcClient(fx.ingest.grpcAddress!), TRACE_EXPORT, await traceRequest(sentinel, [Date.now()]));
  expect(ok.err).toBeNull();
  const events = (await fx.readStream()).events;
  expect(events.filter((e) => e.service === sentinel)).toHaveLength(1);
  return events.filter((e) => e.service === service).length;
}

describe("OTLP/gRPC refusals", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture({ maxBodyBytes: LIMIT });
  });
  afterAll(async () => {
    closeClients();
    await fx?.close();
  });

  it("malformed protobuf: INVALID_ARGUMENT naming the message, no retry info", async () => {
    const { err } = await unary(
      grpcClient(fx.ingest.grpcAddress!),
      TRACE_EXPORT,
      Buffer.from([0x0a, 0xff, 0xff, 0x01]),
    );
    expect(err?.code).toBe(status.INVALID_ARGUMENT);
    expect(err?.details).toMatch(/TM_INGEST_BAD_PROTOBUF: .*ExportTraceServiceRequest/);
    expect(retryDelayS(err!)).toBeUndefined();
    const logs = await unary(grpcClient(fx.ingest.grpcAddress!), LOGS_EXPORT, Buffer.from([0x0a, 0x05, 0x12]));
    expect(logs.err?.code).toBe(status.INVALID_ARGUMENT);
    expect(logs.err?.details).toMatch(/ExportLogsServiceRequest/);
  });

  it("oversized message, plain or a gzip bomb: RESOURCE_EXHAUSTED without retry info, nothing stored", async () => {
    const now = Date.now();
    const big = await traceRequest(
      "oversized",
      Array.from({ length: 8000 }, (_, i) => now - i),
    );
    expect(big.length).toBeGreaterThan(LIMIT);
    for (const gzip of [false, true]) {
      const { err } = await unary(grpcClient(fx.ingest.grpcAddress!, gzip), TRACE_EXPORT, big);
      expect(err?.code, `gzip ${gzip}`).toBe(status.RESOURCE_EXHAUSTED);
      expect(retryDelayS(err!)).toBeUndefined();
    }
    expect(await storedAfterSentinel(fx, "oversized", "after-oversized")).toBe(0);
  });

  it("a wrong or missing token: UNAUTHENTICATED, nothing stored", async () => {
    const body = await traceRequest("unauthenticated", [Date.now()]);
    for (const token of ["not-the-token-0123", null]) {
      const { err } = await unary(grpcClient(fx.ingest.grpcAddress!), TRACE_EXPORT, body, { token });
      expect(err?.code).toBe(status.UNAUTHENTICATED);
      expect(err?.details).toMatch(/TM_INGEST_UNAUTHORIZED/);
      expect(retryDelayS(err!)).toBeUndefined();
    }
    expect(await storedAfterSentinel(fx, "unauthenticated", "after-unauthenticated")).toBe(0);
  });

  it("a deadline that runs out while the call is worked on: DEADLINE_EXCEEDED, nothing stored", async () => {
    const now = Date.now();
    const body = await traceRequest(
      "late",
      Array.from({ length: 3000 }, (_, i) => now - i),
    );
    expect(body.length).toBeLessThan(LIMIT);
    const { err } = await unary(grpcClient(fx.ingest.grpcAddress!), TRACE_EXPORT, body, { deadline: Date.now() + 2 });
    expect(err?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(await storedAfterSentinel(fx, "late", "after-late")).toBe(0);
  });

  it("partial success: refused spans counted, skipped log records told", async () => {
    const now = Date.now();
    const client = grpcClient(fx.ingest.grpcAddress!);
    const traces = await unary(client, TRACE_EXPORT, await traceRequest("partial", [now, now - 3 * 86_400_000]));
    expect(traces.err).toBeNull();
    const response = ProtobufTraceSerializer.deserializeResponse(new Uint8Array(traces.res!));
    expect(Number(response.partialSuccess?.rejectedSpans)).toBe(1);
    expect(response.partialSuccess?.errorMessage).toMatch(
      /1 span\(s\) rejected; first: span 1 ts .*older than the max age/,
    );

    const mem = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ "service.name": "partial-logs" }),
      processors: [new SimpleLogRecordProcessor({ exporter: mem })],
    });
    const logger = provider.getLogger("t");
    logger.emit({ timestamp: now, severityNumber: SeverityNumber.WARN, body: "no status" });
    logger.emit({ timestamp: now, attributes: { "http.response.status_code": 200 } });
    await provider.forceFlush();
    const logs = await unary(
      client,
      LOGS_EXPORT,
      ProtobufLogsSerializer.serializeRequest(mem.getFinishedLogRecords())!,
    );
    expect(logs.err).toBeNull();
    const logsResponse = ProtobufLogsSerializer.deserializeResponse(new Uint8Array(logs.res!));
    expect(Number(logsResponse.partialSuccess?.rejectedLogRecords ?? 0)).toBe(0);
    expect(logsResponse.partialSuccess?.errorMessage).toMatch(
      /^1 log record\(s\) skipped: no http.response.status_code/,
    );
    expect((await fx.readStream()).events.filter((e) => e.service === "partial-logs")).toHaveLength(1);
  });

  it("NATS down: UNAVAILABLE with RetryInfo (retryAfter), nothing stored", async () => {
    const body = await traceRequest("no-nats", [Date.now()]);
    await fx.nats.kill();
    let err = (await unary(grpcClient(fx.ingest.grpcAddress!), TRACE_EXPORT, body)).err;
    // The link notices the lost server on its own: call until it has (bounded by the test timeout).
    while (err?.code !== status.UNAVAILABLE) {
      expect(err).toBeNull();
      await new Promise((r) => setImmediate(r));
      err = (await unary(grpcClient(fx.ingest.grpcAddress!), TRACE_EXPORT, body)).err;
    }
    expect(err.details).toMatch(/TM_INGEST_UNAVAILABLE/);
    expect(retryDelayS(err)).toBe(1);
    await fx.nats.start();
  });
});

describe("OTLP/gRPC per-token rate", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture({ tokenRate: 1, retryAfterS: 3 });
  });
  afterAll(async () => {
    closeClients();
    await fx?.close();
  });

  it("past the token's rate: RESOURCE_EXHAUSTED with RetryInfo of retryAfter seconds", async () => {
    const client = grpcClient(fx.ingest.grpcAddress!);
    const body = await traceRequest("rated", [Date.now()]);
    expect((await unary(client, TRACE_EXPORT, body)).err).toBeNull();
    const { err } = await unary(client, TRACE_EXPORT, body);
    expect(err?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(err?.details).toMatch(/TM_INGEST_RATE_LIMITED/);
    expect(retryDelayS(err!)).toBe(3);
  });
});
