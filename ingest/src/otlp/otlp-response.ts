/**
 * OTLP/HTTP response bodies, in the request's content type: ExportTraceServiceResponse (with
 * partialSuccess only when spans were rejected) on success, google.rpc.Status on failure.
 */
import { ExportTraceServiceResponse, RpcStatus } from "./otlp-schema.js";
import type { TraceFormat } from "./trace-body.js";

export interface OtlpReply {
  contentType: string;
  body: string | Uint8Array;
}

/** gRPC status codes used in google.rpc.Status bodies. */
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 413: 3, 415: 3, 429: 8, 503: 14 };

export function otlpSuccess(format: TraceFormat, rejectedSpans: number, errorMessage: string): OtlpReply {
  const partialSuccess = rejectedSpans > 0 ? { rejectedSpans, errorMessage } : undefined;
  if (format === "json") {
    const body = partialSuccess ? { partialSuccess: { rejectedSpans: String(rejectedSpans), errorMessage } } : {};
    return { contentType: "application/json", body: JSON.stringify(body) };
  }
  const msg = ExportTraceServiceResponse.create(partialSuccess ? { partialSuccess } : {});
  return { contentType: "application/x-protobuf", body: ExportTraceServiceResponse.encode(msg).finish() };
}

export function otlpFailure(format: TraceFormat, httpStatus: number, message: string): OtlpReply {
  const code = GRPC_CODE[httpStatus] ?? 2;
  if (format === "json") return { contentType: "application/json", body: JSON.stringify({ code, message }) };
  return {
    contentType: "application/x-protobuf",
    body: RpcStatus.encode(RpcStatus.create({ code, message })).finish(),
  };
}
