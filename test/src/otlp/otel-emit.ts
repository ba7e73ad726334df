/**
 * Spans and log records made by the real OpenTelemetry JS SDK (sdk-trace-base 2.12, sdk-logs
 * 0.223) and sent through any of its exporters, with the events ingest must store for them, written
 * out by hand from docs/ingest.md ("OTLP"), independently of ingest's mapping code.
 */
import { SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from "@opentelemetry/sdk-logs";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { StoredEvent } from "../ingest/ingest-fixture.js";

export type Expected = Omit<StoredEvent, "ingest_ts" | "partition" | "msgId">;

/** Four spans through `exporter` (one a client child span, not an event); the three events expected. */
export async function emitSpans(exporter: SpanExporter, service: string, startMs: number): Promise<Expected[]> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("grpc-test");
  tracer
    .startSpan("GET /users/:id", {
      kind: SpanKind.SERVER,
      startTime: startMs,
      attributes: { "http.route": "/users/:id?debug=1", "http.response.status_code": 404, "enduser.id": "alice" },
    })
    .end(startMs + 12.5);
  const failed = tracer.startSpan("POST /pay", { kind: SpanKind.SERVER, startTime: startMs + 100 });
  failed.setStatus({ code: SpanStatusCode.ERROR, message: "boom" });
  failed.end(startMs + 350);
  tracer
    .startSpan("nightly-job", { startTime: startMs + 200, attributes: { "http.status_code": 201, "user.id": "bob" } })
    .end(startMs + 1200);
  const parent = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: 1,
    isRemote: true,
  };
  tracer
    .startSpan(
      "SELECT",
      { kind: SpanKind.CLIENT, startTime: startMs + 1 },
      trace.setSpanContext(context.active(), parent),
    )
    .end(startMs + 2);
  await provider.forceFlush();
  await provider.shutdown();
  return [
    { service, route: "/users/:id", status: 404, latency_ms: 12.5, user: "alice", ts: Math.trunc(startMs + 12.5) },
    { service, route: "POST /pay", status: 500, latency_ms: 250, user: "", ts: Math.trunc(startMs + 350) },
    { service, route: "nightly-job", status: 201, latency_ms: 1000, user: "bob", ts: Math.trunc(startMs + 1200) },
  ];
}

/**
 * Five log records through `exporter`: with a status, duration, route and user; with the legacy
 * status attribute as a string; ERROR severity without a status (a failure); FATAL with a
 * status (the status wins); INFO without a status (skipped). Returns the four events expected.
 */
export async function emitLogs(exporter: LogRecordExporter, service: string, atMs: number): Promise<Expected[]> {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    processors: [new BatchLogRecordProcessor({ exporter })],
  });
  const logger = provider.getLogger("grpc-test");
  logger.emit({
    timestamp: atMs,
    severityNumber: SeverityNumber.INFO,
    body: "GET /checkout 503",
    attributes: {
      "http.response.status_code": 503,
      "http.route": "/checkout?step=2",
      "http.server.request.duration": 0.0425,
      "enduser.id": "carol",
    },
  });
  logger.emit({
    timestamp: atMs + 10,
    severityNumber: SeverityNumber.INFO,
    body: "legacy",
    attributes: { "http.status_code": "204", "url.path": "/legacy#top", "user.id": "dave" },
  });
  logger.emit({
    timestamp: atMs + 20,
    severityNumber: SeverityNumber.ERROR,
    body: "payment failed",
    attributes: { "url.path": "/pay" },
  });
  logger.emit({
    timestamp: atMs + 30,
    severityNumber: SeverityNumber.FATAL,
    body: "teapot",
    attributes: { "http.response.status_code": 418, "http.server.request.duration": 2 },
  });
  logger.emit({ timestamp: atMs + 40, severityNumber: SeverityNumber.INFO, body: "cache warmed" });
  await provider.forceFlush();
  await provider.shutdown();
  return [
    { service, route: "/checkout", status: 503, latency_ms: 42.5, user: "carol", ts: atMs },
    { service, route: "/legacy", status: 204, latency_ms: 0, user: "dave", ts: atMs + 10 },
    { service, route: "/pay", status: 500, latency_ms: 0, user: "", ts: atMs + 20 },
    { service, route: "", status: 418, latency_ms: 2000, user: "", ts: atMs + 30 },
  ];
}

/** The stored events of `service` without the fields ingest adds, sorted by ts. */
export function eventsOf(events: readonly StoredEvent[], service: string): Expected[] {
  return events
    .filter((e) => e.service === service)
    .map(({ service: s, route, status, latency_ms, user, ts }) => ({ service: s, route, status, latency_ms, user, ts }))
    .sort((a, b) => a.ts - b.ts);
}
