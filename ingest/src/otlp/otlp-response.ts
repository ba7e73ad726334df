/**
 * OTLP response bodies: over HTTP in the request's content type, Export{Trace,Logs}ServiceResponse
 * (with partialSuccess only when records were refused, or skipped log records warned of) on success, google.rpc.Status on failure;
 * over gRPC the same response message, and on failure a status whose details carry
 * google.rpc.RetryInfo when a retry may succeed (docs/ingest.md, "OTLP/gRPC").
 */
import { RetryInfo, RpcStatus } from "./otlp-schema.js";
import type { OtlpSignal } from "./otlp-signal.js";
import type { OtlpFormat } from "./otlp-walk.js";

export interface OtlpReply {
  contentType: string;
  body: string | Uint8Array;
}

/** gRPC status codes by the HTTP status of an IngestError. */
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 408: 4, 409: 3, 413: 3, 415: 3, 429: 8, 503: 14 };

export function grpcCodeOf(httpStatus: number): number {
  return GRPC_CODE[httpStatus] ?? 13;
}

/** The protobuf response message. */
export function otlpResponse(signal: OtlpSignal, rejected: number, errorMessage: string): Uint8Array {
  const partialSuccess =
    rejected > 0 || errorMessage !== "" ? { [signal.rejectedField]: rejected, errorMessage } : undefined;
  return signal.response.encode(signal.response.create(partialSuccess ? { partialSuccess } : {})).finish();
}

export function otlpSuccess(signal: OtlpSignal, format: OtlpFormat, rejected: number, errorMessage: string): OtlpReply {
  if (format === "json") {
    const body =
      rejected > 0 || errorMessage !== ""
        ? { partialSuccess: { [signal.rejectedField]: String(rejected), errorMessage } }
        : {};
    return { contentType: "application/json", body: JSON.stringify(body) };
  }
  return { contentType: "application/x-protobuf", body: otlpResponse(signal, rejected, errorMessage) };
}

export function otlpFailure(format: OtlpFormat, httpStatus: number, message: string): OtlpReply {
  const code = GRPC_CODE[httpStatus] ?? 2;
  if (format === "json") return { contentType: "application/json", body: JSON.stringify({ code, message }) };
  return {
    contentType: "application/x-protobuf",
    body: RpcStatus.encode(RpcStatus.create({ code, message })).finish(),
  };
}

/** google.rpc.Status with one RetryInfo detail (`retryAfterS`), for grpc-status-details-bin. */
export function retryStatus(code: number, message: string, retryAfterS: number): Uint8Array {
  const info = RetryInfo.encode(RetryInfo.create({ retryDelay: { seconds: retryAfterS, nanos: 0 } })).finish();
  const details = [{ typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: info }];
  return RpcStatus.encode(RpcStatus.create({ code, message, details })).finish();
}
