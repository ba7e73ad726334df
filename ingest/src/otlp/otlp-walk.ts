/**
 * Decoding an OTLP export request (protobuf or JSON) and walking its records by resource, the same
 * for traces (resourceSpans → scopeSpans → spans) and logs (resourceLogs → scopeLogs →
 * logRecords): both encodings share the camelCase field names, and the walker checks every shape
 * because OTLP/JSON arrives untyped (docs/ingest.md, "OTLP").
 */
import type protobuf from "protobufjs";
import { IngestError } from "../errors.js";
import { decodeUtf8 } from "../events/event-body.js";
import { countSpans } from "./span-count.js";

export type OtlpFormat = "protobuf" | "json";

/** The three levels of a request: e.g. resourceSpans, scopeSpans, spans. */
export interface OtlpLevels {
  readonly message: string;
  readonly resources: string;
  readonly scopes: string;
  readonly records: string;
  readonly type: protobuf.Type;
}

export function decodeOtlp(body: Buffer, format: OtlpFormat, levels: OtlpLevels, maxRecords: number): unknown {
  if (format === "protobuf") {
    // Counted on the wire first: a body of millions of records is refused before it is decoded.
    // Both requests nest their records at fields 1 → 2 → 2 (span-count.ts).
    if (countSpans(body, maxRecords) > maxRecords)
      throw new IngestError(
        "TM_INGEST_TOO_MANY_EVENTS",
        `more than ${maxRecords} records in one request: split it into smaller requests`,
      );
    try {
      return levels.type.decode(body);
    } catch (err) {
      throw new IngestError(
        "TM_INGEST_BAD_PROTOBUF",
        `body is not a valid ${levels.message} protobuf (${(err as Error).message})`,
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Calls `visit(record, resource, index)` for every record; a record that is not an object is passed as null. */
export function walkOtlp(
  req: unknown,
  levels: OtlpLevels,
  visit: (record: Record<string, unknown> | null, resource: unknown, index: number) => void,
): void {
  if (!isObject(req))
    throw new IngestError("TM_INGEST_BAD_SHAPE", `body must be an ${levels.message} object with ${levels.resources}`);
  let index = 0;
  for (const r of list(req[levels.resources], levels.resources)) {
    if (!isObject(r)) throw new IngestError("TM_INGEST_BAD_SHAPE", `each ${levels.resources} entry must be an object`);
    for (const s of list(r[levels.scopes], `${levels.resources}[].${levels.scopes}`)) {
      if (!isObject(s)) throw new IngestError("TM_INGEST_BAD_SHAPE", `each ${levels.scopes} entry must be an object`);
      for (const rec of list(s[levels.records], `${levels.scopes}[].${levels.records}`))
        visit(isObject(rec) ? rec : null, r.resource, index++);
    }
  }
}
