/**
 * The two OTLP signals ingest takes, over HTTP and gRPC alike (docs/ingest.md, "OTLP"): how a
 * request is parsed, what its records are called, and how the response names the refused ones.
 */
import type { EventBodyOptions } from "../events/event-body.js";
import { parseLogsBody } from "./logs-body.js";
import { ExportLogsServiceResponse, ExportTraceServiceResponse } from "./otlp-schema.js";
import type { OtlpFormat } from "./otlp-walk.js";
import { parseTraceBody, type TraceBatch } from "./trace-body.js";
import type protobuf from "protobufjs";

export interface OtlpSignal {
  readonly name: "traces" | "logs";
  /** OTLP/HTTP path and gRPC method path. */
  readonly httpPath: string;
  readonly grpcPath: string;
  /** e.g. "span", for messages. */
  readonly record: string;
  /** The partial-success field counting refused records. */
  readonly rejectedField: "rejectedSpans" | "rejectedLogRecords";
  readonly response: protobuf.Type;
  parse(body: Buffer, format: OtlpFormat, ingestTs: number, opts: EventBodyOptions): TraceBatch;
}

export const TRACES: OtlpSignal = {
  name: "traces",
  httpPath: "/v1/traces",
  grpcPath: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
  record: "span",
  rejectedField: "rejectedSpans",
  response: ExportTraceServiceResponse,
  parse: parseTraceBody,
};

export const LOGS: OtlpSignal = {
  name: "logs",
  httpPath: "/v1/logs",
  grpcPath: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
  record: "log record",
  rejectedField: "rejectedLogRecords",
  response: ExportLogsServiceResponse,
  parse: parseLogsBody,
};

/**
 * The partial-success message: how many records were refused and why the first was; for logs,
 * also how many were skipped for want of an HTTP status (a warning when none was refused).
 */
export function rejectionMessage(signal: OtlpSignal, { batch, skipped }: TraceBatch): string {
  const first = batch.errors[0];
  const parts = first
    ? [
        `${batch.rejected} ${signal.record}(s) rejected; first: ${signal.record} ${first.index} ${first.field} ${first.message}`,
      ]
    : [];
  if (signal.name === "logs" && skipped > 0)
    parts.push(
      `${skipped} log record(s) skipped: no http.response.status_code attribute and severity below ERROR (docs/ingest.md)`,
    );
  return parts.join("; ");
}
