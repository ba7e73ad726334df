/**
 * Parses a `POST /v1/traces` body (OTLP/HTTP, protobuf or JSON) into a RecordBatch by walking the
 * decoded message directly (no toObject): both encodings share the camelCase field names, and the
 * walker checks every shape because OTLP/JSON arrives untyped.
 */
import { IngestError } from "../errors.js";
import type { EventBodyOptions } from "../events/event-body.js";
import { decodeUtf8 } from "../events/event-body.js";
import { RecordBatch } from "../events/record-batch.js";
import { ExportTraceServiceRequest } from "./otlp-schema.js";
import { countSpans } from "./span-count.js";
import { isEventSpan, serviceNameOf, spanToEvent } from "./span-event.js";

export type TraceFormat = "protobuf" | "json";

/** The batch of events; `skipped` counts spans that are neither server nor root spans. */
export interface TraceBatch {
  batch: RecordBatch;
  skipped: number;
}

function decode(body: Buffer, format: TraceFormat, maxRecords: number): unknown {
  if (format === "protobuf") {
    // Counted on the wire first: a body of millions of spans is refused before it is decoded.
    if (countSpans(body, maxRecords) > maxRecords)
      throw new IngestError(
        "TM_INGEST_TOO_MANY_EVENTS",
        `more than ${maxRecords} records in one request: split it into smaller requests`,
      );
    try {
      return ExportTraceServiceRequest.decode(body);
    } catch (err) {
      throw new IngestError(
        "TM_INGEST_BAD_PROTOBUF",
        `body is not a valid ExportTraceServiceRequest protobuf (${(err as Error).message})`,
      );
    }
  }
  try {
    return JSON.parse(decodeUtf8(body));
  } catch (err) {
    if (err instanceof IngestError) throw err;
    throw new IngestError("TM_INGEST_BAD_JSON", `body is not valid JSON: ${(err as Error).message}`);
  }
}

function list(v: unknown, field: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new IngestError("TM_INGEST_BAD_SHAPE", `${field} must be an array`);
  return v;
}

export function parseTraceBody(
  body: Buffer,
  format: TraceFormat,
  ingestTs: number,
  opts: EventBodyOptions,
): TraceBatch {
  const req = decode(body, format, opts.maxEventsPerRequest);
  if (typeof req !== "object" || req === null || Array.isArray(req))
    throw new IngestError("TM_INGEST_BAD_SHAPE", "body must be an ExportTraceServiceRequest object with resourceSpans");
  const batch = new RecordBatch(opts.maxEventsPerRequest);
  let skipped = 0;
  let index = 0;
  for (const rs of list((req as { resourceSpans?: unknown }).resourceSpans, "resourceSpans")) {
    if (typeof rs !== "object" || rs === null || Array.isArray(rs))
      throw new IngestError("TM_INGEST_BAD_SHAPE", "each resourceSpans entry must be an object");
    const service = serviceNameOf((rs as { resource?: unknown }).resource);
    for (const ss of list((rs as { scopeSpans?: unknown }).scopeSpans, "resourceSpans[].scopeSpans")) {
      if (typeof ss !== "object" || ss === null || Array.isArray(ss))
        throw new IngestError("TM_INGEST_BAD_SHAPE", "each scopeSpans entry must be an object");
      for (const span of list((ss as { spans?: unknown }).spans, "scopeSpans[].spans")) {
        if (typeof span !== "object" || span === null || Array.isArray(span)) {
          batch.reject(index++, "(span)", "each span must be an object");
        } else if (isEventSpan(span as Record<string, unknown>)) {
          batch.add(spanToEvent(span as Record<string, unknown>, service, ingestTs, opts), index++);
        } else {
          batch.skip();
          skipped++;
          index++;
        }
      }
    }
  }
  return { batch, skipped };
}
