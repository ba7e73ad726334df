/**
 * `POST /v1/logs` from the OpenTelemetry JS logs exporters over HTTP (JSON and protobuf, plain and
 * gzip): the events in TM_EVENTS (real nats-server) equal the records with an HTTP status; the
 * others are skipped (docs/ingest.md, "`POST /v1/logs`").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OTLPLogExporter as OTLPJsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as OTLPProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import { TOKEN, startIngestFixture, type IngestFixture } from "../ingest/ingest-fixture.js";
import { emitLogs, eventsOf } from "./otel-emit.js";

describe("OTLP/HTTP logs from the OpenTelemetry JS SDK", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  const headers = { Authorization: `Bearer ${TOKEN}` };
  const variants: [string, (url: string) => LogRecordExporter][] = [
    ["json", (url) => new OTLPJsonLogExporter({ url, headers })],
    ["json-gzip", (url) => new OTLPJsonLogExporter({ url, headers, compression: "gzip" as never })],
    ["proto", (url) => new OTLPProtoLogExporter({ url, headers })],
    ["proto-gzip", (url) => new OTLPProtoLogExporter({ url, headers, compression: "gzip" as never })],
  ];

  for (const [name, make] of variants) {
    it(`${name}: records with an HTTP status land as events, the others are skipped`, async () => {
      const service = `http-logs-${name}`;
      const expected = await emitLogs(make(`${fx.ingest.url}/v1/logs`), service, Date.now() - 20_000);
      expect(eventsOf((await fx.readStream()).events, service)).toEqual(expected);
    });
  }

  it("tells skipped records in partialSuccess and counts them", async () => {
    const now = String(BigInt(Date.now()) * 1_000_000n);
    const body = JSON.stringify({
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "json-partial" } }] },
          scopeLogs: [
            {
              logRecords: [
                { timeUnixNano: now, severityNumber: "SEVERITY_NUMBER_ERROR2" },
                { timeUnixNano: now, severityNumber: 9 },
                {
                  observedTimeUnixNano: now,
                  attributes: [{ key: "http.response.status_code", value: { intValue: "302" } }],
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await fx.post("/v1/logs", body, "application/json");
    expect(res.status).toBe(200);
    const out = (await res.json()) as { partialSuccess: { rejectedLogRecords: string; errorMessage: string } };
    expect(out.partialSuccess.rejectedLogRecords).toBe("0");
    expect(out.partialSuccess.errorMessage).toMatch(/^1 log record\(s\) skipped/);
    const got = eventsOf((await fx.readStream()).events, "json-partial");
    expect(got.map((e) => e.status).sort()).toEqual([302, 500]);
    const metrics = await (await fetch(`${fx.ingest.url}/metrics`)).text();
    expect(Number(/tidemark_ingest_log_records_skipped_total (\d+)/.exec(metrics)?.[1])).toBe(4 + 1);
  });
});
