/**
 * Real clients nobody here wrote: the OpenTelemetry JS gRPC exporters (traces and logs, 0.223)
 * export to ingest's OTLP/gRPC port, plain and gzip; the events in TM_EVENTS (real nats-server)
 * must equal the spans and records sent (docs/ingest.md, "OTLP").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Metadata } from "@grpc/grpc-js";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { TOKEN, startIngestFixture, type IngestFixture } from "../ingest/ingest-fixture.js";
import { emitLogs, emitSpans, eventsOf } from "./otel-emit.js";

describe("OTLP/gRPC from the OpenTelemetry JS exporters", () => {
  let fx: IngestFixture;
  let url: string;
  beforeAll(async () => {
    fx = await startIngestFixture();
    url = `http://${fx.ingest.grpcAddress}`;
  });
  afterAll(async () => {
    await fx?.close();
  });

  const metadata = (): Metadata => {
    const m = new Metadata();
    m.set("authorization", `Bearer ${TOKEN}`);
    return m;
  };

  for (const compression of ["none", "gzip"] as never[]) {
    it(`traces (${compression}): every server and root span lands as its event`, async () => {
      const service = `grpc-traces-${compression}`;
      const startMs = Date.now() - 60_000 + 0.25;
      const expected = await emitSpans(
        new OTLPTraceExporter({ url, metadata: metadata(), compression }),
        service,
        startMs,
      );
      const got = eventsOf((await fx.readStream()).events, service);
      expect(got.map((e) => ({ ...e, latency_ms: 0 }))).toEqual(expected.map((e) => ({ ...e, latency_ms: 0 })));
      for (const [i, e] of got.entries()) expect(e.latency_ms).toBeCloseTo(expected[i]!.latency_ms, 3);
    });

    it(`logs (${compression}): records with an HTTP status land as events, the others are skipped`, async () => {
      const service = `grpc-logs-${compression}`;
      const expected = await emitLogs(
        new OTLPLogExporter({ url, metadata: metadata(), compression }),
        service,
        Date.now() - 30_000,
      );
      expect(eventsOf((await fx.readStream()).events, service)).toEqual(expected);
    });
  }

  it("counts the skipped log records and the calls, by method and status code", async () => {
    const text = await (await fetch(`${fx.ingest.url}/metrics`)).text();
    expect(Number(/tidemark_ingest_log_records_skipped_total (\d+)/.exec(text)?.[1])).toBe(2);
    expect(text).toMatch(/tidemark_ingest_grpc_call_duration_seconds_count\{method="logs",code="0"\} 2/);
    expect(fx.ingest.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
  });
});
