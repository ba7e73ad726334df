/**
 * Parses a logs export request (OTLP/HTTP protobuf or JSON, or an OTLP/gRPC message) into a
 * RecordBatch: records with an HTTP status become events (log-event.ts), the others are skipped
 * and counted (docs/ingest.md, "`POST /v1/logs`").
 */
import type { EventBodyOptions } from "../events/event-body.js";
import { RecordBatch } from "../events/record-batch.js";
import { logStatus, logToEvent } from "./log-event.js";
import { ExportLogsServiceRequest } from "./otlp-schema.js";
import { decodeOtlp, walkOtlp, type OtlpFormat, type OtlpLevels } from "./otlp-walk.js";
import { serviceNameOf } from "./span-event.js";
import type { TraceBatch } from "./trace-body.js";

const LEVELS: OtlpLevels = {
  message: "ExportLogsServiceRequest",
  resources: "resourceLogs",
  scopes: "scopeLogs",
  records: "logRecords",
  type: ExportLogsServiceRequest,
};

/** The batch of events; `skipped` counts records without an HTTP status. */
export function parseLogsBody(body: Buffer, format: OtlpFormat, ingestTs: number, opts: EventBodyOptions): TraceBatch {
  const req = decodeOtlp(body, format, LEVELS, opts.maxEventsPerRequest);
  const batch = new RecordBatch(opts.maxEventsPerRequest);
  let skipped = 0;
  walkOtlp(req, LEVELS, (record, resource, index) => {
    if (record === null) return batch.reject(index, "(logRecord)", "each log record must be an object");
    const status = logStatus(record);
    if (status !== undefined)
      return batch.add(logToEvent(record, status, serviceNameOf(resource), ingestTs, opts), index);
    batch.skip();
    skipped++;
  });
  return { batch, skipped };
}
