/**
 * Parses a `POST /v1/events` body: NDJSON (one event per line; a line that is not JSON is a
 * per-record error naming the line) or JSON (an array, or `{ "events": [...] }`; a body that is
 * not JSON at all is a 400 naming the offset).
 */
import { IngestError } from "../errors.js";
import { normalizeEvent, type EventLimits } from "./normalize-event.js";
import { RecordBatch } from "./record-batch.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The body as text; invalid UTF-8 is a 400. */
export function decodeUtf8(body: Uint8Array): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new IngestError("TM_INGEST_BAD_UTF8", "body is not valid UTF-8: encode text as UTF-8");
  }
}

export type EventFormat = "ndjson" | "json";

export interface EventBodyOptions extends EventLimits {
  readonly maxEventsPerRequest: number;
}

export function parseEventBody(
  text: string,
  format: EventFormat,
  ingestTs: number,
  opts: EventBodyOptions,
): RecordBatch {
  const batch = new RecordBatch(opts.maxEventsPerRequest);
  if (format === "ndjson") parseNdjson(text, ingestTs, opts, batch);
  else parseJson(text, ingestTs, opts, batch);
  return batch;
}

function parseNdjson(text: string, ingestTs: number, opts: EventBodyOptions, batch: RecordBatch): void {
  let start = 0;
  let line = 0;
  let index = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    line++;
    const raw = text.slice(start, end);
    start = end + 1;
    if (raw.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      batch.reject(index++, `(line ${line})`, `line ${line} is not valid JSON: ${(err as Error).message}`);
      continue;
    }
    batch.add(normalizeEvent(value, ingestTs, opts), index++);
  }
}

function parseJson(text: string, ingestTs: number, opts: EventBodyOptions, batch: RecordBatch): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new IngestError("TM_INGEST_BAD_JSON", `body is not valid JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(value) ? value : (value as { events?: unknown } | null)?.events;
  if (!Array.isArray(list))
    throw new IngestError(
      "TM_INGEST_BAD_SHAPE",
      'a JSON body must be an array of events or an object { "events": [...] }',
    );
  for (let i = 0; i < list.length; i++) batch.add(normalizeEvent(list[i], ingestTs, opts), i);
}
