/** Errors of @tidemark/deploy, each with a stable code (design §12). */
export type DeployErrorCode =
  | "TM_NATS_START_FAILED"
  | "TM_CLI_UNKNOWN_COMMAND"
  | "TM_CLI_BAD_FLAG"
  | "TM_CLI_MISSING_FLAG"
  | "TM_PORT_UNAVAILABLE";

export class DeployError extends Error {
  constructor(
    readonly code: DeployErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "DeployError";
  }
}
