/** Errors of @tidemark/ingest, each with a stable code and the HTTP status it answers with. */
export type IngestErrorCode =
  | "TM_INGEST_CONFIG"
  | "TM_INGEST_UNAUTHORIZED"
  | "TM_INGEST_UNSUPPORTED_MEDIA_TYPE"
  | "TM_INGEST_UNSUPPORTED_ENCODING"
  | "TM_INGEST_BODY_TOO_LARGE"
  | "TM_INGEST_TOO_MANY_EVENTS"
  | "TM_INGEST_BAD_GZIP"
  | "TM_INGEST_BODY_ABORTED"
  | "TM_INGEST_BAD_UTF8"
  | "TM_INGEST_BAD_JSON"
  | "TM_INGEST_BAD_SHAPE"
  | "TM_INGEST_BAD_PROTOBUF"
  | "TM_INGEST_BAD_REQUEST_ID"
  | "TM_INGEST_NO_VALID_EVENTS"
  | "TM_INGEST_OVERLOADED"
  | "TM_INGEST_IDEMPOTENCY_CONFLICT"
  | "TM_INGEST_RATE_LIMITED"
  | "TM_INGEST_BODY_TIMEOUT"
  | "TM_INGEST_DEADLINE_EXCEEDED"
  | "TM_INGEST_INTERNAL"
  | "TM_INGEST_UNAVAILABLE"
  | "TM_INGEST_PARSE_BUSY";

const STATUS: Record<IngestErrorCode, number> = {
  TM_INGEST_CONFIG: 500,
  TM_INGEST_UNAUTHORIZED: 401,
  TM_INGEST_UNSUPPORTED_MEDIA_TYPE: 415,
  TM_INGEST_UNSUPPORTED_ENCODING: 415,
  TM_INGEST_BODY_TOO_LARGE: 413,
  TM_INGEST_TOO_MANY_EVENTS: 413,
  TM_INGEST_BAD_GZIP: 400,
  TM_INGEST_BODY_ABORTED: 400,
  TM_INGEST_BAD_UTF8: 400,
  TM_INGEST_BAD_JSON: 400,
  TM_INGEST_BAD_SHAPE: 400,
  TM_INGEST_BAD_PROTOBUF: 400,
  TM_INGEST_BAD_REQUEST_ID: 400,
  TM_INGEST_NO_VALID_EVENTS: 400,
  TM_INGEST_OVERLOADED: 429,
  TM_INGEST_IDEMPOTENCY_CONFLICT: 409,
  TM_INGEST_RATE_LIMITED: 429,
  TM_INGEST_BODY_TIMEOUT: 408,
  TM_INGEST_DEADLINE_EXCEEDED: 408,
  TM_INGEST_INTERNAL: 500,
  TM_INGEST_UNAVAILABLE: 503,
  TM_INGEST_PARSE_BUSY: 503,
};

export class IngestError extends Error {
  /** HTTP status this error answers with (500 for configuration errors, which never reach HTTP). */
  readonly status: number;
  constructor(
    readonly code: IngestErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "IngestError";
    this.status = STATUS[code];
  }

  /** 429 and 503 are worth retrying; every other 4xx is not (OTLP spec). */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503;
  }
}
