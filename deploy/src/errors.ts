/** Errors of @tidemark/deploy, each with a stable code. */
export type DeployErrorCode =
  | "TM_NATS_START_FAILED"
  | "TM_CLI_UNKNOWN_COMMAND"
  | "TM_CLI_BAD_FLAG"
  | "TM_CLI_MISSING_FLAG"
  | "TM_PORT_UNAVAILABLE"
  | "TM_RECORDING_UNREADABLE"
  | "TM_RECORDING_INVALID"
  | "TM_CONFIG_NOT_FOUND"
  | "TM_CONFIG_INVALID"
  | "TM_ROLE_START_FAILED"
  | "TM_DEMO_REFUSED"
  | "TM_BACKFILL_NOT_STORED"
  | "TM_LOAD_REFUSED"
  | "TM_LOAD_UNREACHABLE"
  | "TM_LOAD_OUTPUT";

export class DeployError extends Error {
  constructor(
    readonly code: DeployErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "DeployError";
  }
}
