/**
 * Parses a traces export request (OTLP/HTTP protobuf or JSON, or an OTLP/gRPC message) into a
 * RecordBatch: server and root spans become events (span-event.ts), other spans are skipped.
 */
import type { EventBodyOptions } from "../events/event-body.js";
import { RecordBatch } from "../events/record-batch.js";
import { ExportTraceServiceRequest } from "./otlp-schema.js";
import { decodeOtlp, walkOtlp, type OtlpFormat, type OtlpLevels } from "./otlp-walk.js";
import { isEventSpan, serviceNameOf, spanToEvent } from "./span-event.js";

export type TraceFormat = OtlpFormat;

/** The batch of events; `skipped` counts spans that are neither server nor root spans. */
export interface TraceBatch {
  batch: RecordBatch;
  skipped: number;
}

const LEVELS: OtlpLevels = {
  message: "ExportTraceServiceRequest",
  resources: "resourceSpans",
  scopes: "scopeSpans",
  records: "spans",
  type: ExportTraceServiceRequest,
};

export function parseTraceBody(
  body: Buffer,
  format: TraceFormat,
  ingestTs: number,
  opts: EventBodyOptions,
): TraceBatch {
  const req = decodeOtlp(body, format, LEVELS, opts.maxEventsPerRequest);
  const batch = new RecordBatch(opts.maxEventsPerRequest);
  let skipped = 0;
  walkOtlp(req, LEVELS, (span, resource, index) => {
    if (span === null) batch.reject(index, "(span)", "each span must be an object");
    else if (isEventSpan(span)) batch.add(spanToEvent(span, serviceNameOf(resource), ingestTs, opts), index);
    else {
      batch.skip();
      skipped++;
    }
  });
  return { batch, skipped };
}
