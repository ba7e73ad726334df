/** Which parser a request's Content-Type selects, per endpoint; anything else is 415. */
import { IngestError } from "../errors.js";
import type { EventFormat } from "../events/event-body.js";
import type { TraceFormat } from "../otlp/trace-body.js";

function essence(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

const EVENT_TYPES: Record<string, EventFormat> = {
  "application/x-ndjson": "ndjson",
  "application/ndjson": "ndjson",
  "application/jsonl": "ndjson",
  "application/json": "json",
};
const TRACE_TYPES: Record<string, TraceFormat> = {
  "application/x-protobuf": "protobuf",
  "application/protobuf": "protobuf",
  "application/json": "json",
};

export function eventFormatOf(contentType: string | undefined): EventFormat {
  const f = EVENT_TYPES[essence(contentType)];
  if (!f)
    throw new IngestError(
      "TM_INGEST_UNSUPPORTED_MEDIA_TYPE",
      `Content-Type "${contentType ?? ""}" is not accepted on /v1/events: send application/x-ndjson or application/json`,
    );
  return f;
}

/** The trace format, or undefined when unsupported (the caller answers 415 in JSON). */
export function traceFormatOf(contentType: string | undefined): TraceFormat | undefined {
  return TRACE_TYPES[essence(contentType)];
}
