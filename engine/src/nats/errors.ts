/** Errors of the NATS wiring (`@tidemark/engine/nats`), each with a stable code. Messages say what to do. */
export type NatsErrorCode = "TM_NATS_UNREACHABLE" | "TM_STREAM_MISMATCH";

export class NatsError extends Error {
  constructor(
    readonly code: NatsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "NatsError";
  }
}

/** An existing stream differs from the spec. `differences` names each field: expected vs actual. */
export class StreamMismatchError extends NatsError {
  constructor(
    readonly stream: string,
    readonly differences: readonly string[],
  ) {
    super(
      "TM_STREAM_MISMATCH",
      `stream ${stream} exists with a different configuration (${differences.join("; ")}); ` +
        `tidemark never alters an existing stream: delete it (nats stream rm ${stream}) ` +
        `or start tidemark with settings that match it`,
    );
    this.name = "StreamMismatchError";
  }
}
