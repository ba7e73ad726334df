/**
 * Reads a recording (NDJSON, one event per line, arrival order; docs/operations.md, "Backfill").
 * Any problem stops the read with the file, the line number and the field named (DeployError, exit
 * code 2).
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import { DeployError } from "../errors.js";

const NUMBERS = ["ts", "ingest_ts", "status", "latency_ms"] as const;

function invalid(file: string, line: number, what: string): DeployError {
  return new DeployError(
    "TM_RECORDING_INVALID",
    `${file}:${line}: ${what}; fix or remove the line (format: one JSON event per line, docs/operations.md "Backfill")`,
  );
}

/** Validates one parsed line into an event. */
export function toEvent(v: unknown, file: string, line: number): TelemetryEvent {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalid(file, line, "is not a JSON object");
  const o = v as Record<string, unknown>;
  for (const k of NUMBERS) {
    if (o[k] === undefined) throw invalid(file, line, `field "${k}" is missing`);
    if (typeof o[k] !== "number" || !Number.isFinite(o[k]))
      throw invalid(file, line, `field "${k}" must be a number, got ${JSON.stringify(o[k])}`);
  }
  if (typeof o.service !== "string" || o.service === "")
    throw invalid(
      file,
      line,
      o.service === undefined ? `field "service" is missing` : `field "service" must be a non-empty string`,
    );
  for (const k of ["route", "user"] as const)
    if (o[k] !== undefined && typeof o[k] !== "string")
      throw invalid(file, line, `field "${k}" must be a string, got ${JSON.stringify(o[k])}`);
  return {
    ts: o.ts as number,
    ingest_ts: o.ingest_ts as number,
    service: o.service,
    route: (o.route as string | undefined) ?? "",
    status: o.status as number,
    latency_ms: o.latency_ms as number,
    user: (o.user as string | undefined) ?? "",
  };
}

export interface Recording {
  events: TelemetryEvent[];
  /** True when lines were not in ingest_ts order and were sorted (stably). */
  sorted: boolean;
}

/**
 * Reads and validates every line, streaming (a recording may be larger than a string can hold);
 * blank lines are skipped. `onBytes` reports the bytes read so far every 100 000 lines.
 */
export async function readRecording(file: string, onBytes?: (bytesRead: number) => void): Promise<Recording> {
  const events: TelemetryEvent[] = [];
  let inOrder = true;
  let line = 0;
  const input = createReadStream(file, { encoding: "utf8" });
  try {
    for await (const text of createInterface({ input, crlfDelay: Infinity })) {
      line++;
      const raw = text.trim();
      if (raw === "") continue;
      let v: unknown;
      try {
        v = JSON.parse(raw);
      } catch {
        throw invalid(file, line, "is not valid JSON");
      }
      const e = toEvent(v, file, line);
      if (events.length > 0 && e.ingest_ts < (events[events.length - 1] as TelemetryEvent).ingest_ts) inOrder = false;
      events.push(e);
      if (onBytes && line % 100_000 === 0) onBytes(input.bytesRead);
    }
  } catch (e) {
    if (e instanceof DeployError) throw e;
    throw new DeployError(
      "TM_RECORDING_UNREADABLE",
      `${file}: cannot read the recording (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): check the --input path`,
    );
  } finally {
    input.destroy();
  }
  if (!inOrder) events.sort((a, b) => a.ingest_ts - b.ingest_ts);
  return { events, sorted: !inOrder };
}
