/** Prometheus response bodies: `{status, data, warnings?}` and `{status:"error", errorType, error}`. */
import type { DashboardError } from "../errors.js";
import { formatValue, type RangeSeries, type Value } from "../promql/index.js";
import { BodyWriter } from "./body-writer.js";
import { writeMatrix } from "./matrix-body.js";

export type ErrorType =
  "bad_data" | "execution" | "not_found" | "unauthorized" | "internal" | "timeout" | "unavailable" | "canceled";

const STATUS: Record<string, [number, ErrorType]> = {
  TM_PROMQL_PARSE: [400, "bad_data"],
  TM_PROM_PARAM_INVALID: [400, "bad_data"],
  TM_PROMQL_UNSUPPORTED: [422, "execution"],
  TM_PROMQL_EXECUTION: [422, "execution"],
  TM_PROM_NOT_FOUND: [404, "not_found"],
  TM_DASHBOARD_UNAUTHORIZED: [401, "unauthorized"],
  // Query limits (docs/prometheus-api.md, "Query limits"): Prometheus's statuses and error types.
  TM_PROM_LIMIT: [422, "execution"],
  TM_PROM_TIMEOUT: [503, "timeout"],
  TM_PROM_BUSY: [503, "unavailable"],
  TM_PROM_CANCELED: [499, "canceled"],
};

export interface ErrorReply {
  status: number;
  body: { status: "error"; errorType: ErrorType; error: string; code: string };
}

export function errorReply(err: unknown): ErrorReply {
  const e = err as Partial<DashboardError>;
  const [status, errorType] = STATUS[e.code ?? ""] ?? [500, "internal"];
  return {
    status,
    body: { status: "error", errorType, error: e.message ?? String(err), code: e.code ?? "TM_PROM_INTERNAL" },
  };
}

/** The JSON text of a success body. */
export function successJson(data: string, warnings: readonly string[]): string {
  return `{"status":"success","data":${data}${warningsJson(warnings)}}`;
}

function warningsJson(warnings: readonly string[]): string {
  return warnings.length > 0 ? `,"warnings":${JSON.stringify(warnings)}` : "";
}

const sec = (ms: number): number => ms / 1000;

/** `data` of an instant query. */
export function instantData(v: Value, timeMs: number): string {
  const t = sec(timeMs);
  switch (v.type) {
    case "scalar":
      return JSON.stringify({ resultType: "scalar", result: [t, formatValue(v.value)] });
    case "string":
      return JSON.stringify({ resultType: "string", result: [t, v.value] });
    case "vector":
      return JSON.stringify({
        resultType: "vector",
        result: v.samples.map((s) => ({ metric: s.labels, value: [t, formatValue(s.value)] })),
      });
    case "matrix":
      return matrixData(v.series);
  }
}

/** `data` of an instant query of a range selector. */
export function matrixData(series: readonly RangeSeries[]): string {
  const w = new BodyWriter();
  writeMatrix(w, series);
  return w.bytes().toString("utf8");
}

/** The success body of a range query, as bytes: written straight into a buffer (the bulk of the bytes). */
export function matrixBody(series: readonly RangeSeries[], warnings: readonly string[], maxBytes = Infinity): Buffer {
  let points = 0;
  for (const s of series) points += s.times.length;
  const w = new BodyWriter(points * 48 + series.length * 256 + 1024, maxBytes);
  w.ascii('{"status":"success","data":');
  writeMatrix(w, series);
  w.text(`${warningsJson(warnings)}}`);
  return w.bytes();
}
