/**
 * One line of a recording (docs/operations.md, "Backfill"):
 * `{"ts","ingest_ts","service","route","status","latency_ms","user"}`.
 */
import type { TelemetryEvent } from "../../protocol.js";
import { RuntimeError } from "../errors.js";

export function parseRecordingLine(line: string, where: string): TelemetryEvent {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw bad(where, "is not JSON: each line of a recording is one JSON object");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad(where, "is not a JSON object");
  const o = v as Record<string, unknown>;
  const num = (k: string): number => {
    const x = o[k];
    if (typeof x !== "number" || !Number.isFinite(x))
      throw bad(where, `field "${k}" must be a number, got ${JSON.stringify(x)}`);
    return x;
  };
  const text = (k: string, required: boolean): string => {
    const x = o[k];
    if (x === undefined && !required) return "";
    if (typeof x !== "string" || (required && x === ""))
      throw bad(where, `field "${k}" must be a ${required ? "non-empty " : ""}string, got ${JSON.stringify(x)}`);
    return x;
  };
  return {
    ts: num("ts"),
    ingest_ts: num("ingest_ts"),
    service: text("service", true),
    route: text("route", false),
    status: num("status"),
    latency_ms: num("latency_ms"),
    user: text("user", false),
  };
}

function bad(where: string, why: string): RuntimeError {
  return new RuntimeError(
    "TM_BACKFILL_BAD_RECORD",
    `${where} ${why}; fix or remove the line (format: docs/operations.md "Backfill", one event per line)`,
  );
}
