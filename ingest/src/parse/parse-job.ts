/**
 * What parsing a write body means, the same inline and in a parse worker (docs/ingest.md,
 * "Parsing off the event loop"): a job names the endpoint and format; the body is parsed with its
 * time DEFERRED, so the batch is stamped (ingest_ts, time rules) when it is published.
 */
import { decodeUtf8, parseEventBody, type EventBodyOptions, type EventFormat } from "../events/event-body.js";
import { DEFERRED } from "../events/normalize-event.js";
import type { RecordBatch } from "../events/record-batch.js";
import { parseLogsBody } from "../otlp/logs-body.js";
import type { OtlpFormat } from "../otlp/otlp-walk.js";
import { parseTraceBody } from "../otlp/trace-body.js";

export type ParseJob =
  | { readonly kind: "events"; readonly format: EventFormat }
  | { readonly kind: "traces" | "logs"; readonly format: OtlpFormat };

/** A parsed body: its records (time not applied yet) and, for OTLP, the records that are not events. */
export interface Parsed {
  readonly batch: RecordBatch;
  readonly skipped: number;
}

export function parseDeferred(job: ParseJob, body: Buffer, opts: EventBodyOptions): Parsed {
  switch (job.kind) {
    case "events":
      return { batch: parseEventBody(decodeUtf8(body), job.format, DEFERRED, opts), skipped: 0 };
    case "traces":
      return parseTraceBody(body, job.format, DEFERRED, opts);
    case "logs":
      return parseLogsBody(body, job.format, DEFERRED, opts);
  }
}
