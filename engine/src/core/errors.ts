/** Errors of the pure core, each with a stable code. */
export type CoreErrorCode =
  | "TM_CONFIG_INVALID"
  | "TM_SNAPSHOT_VERSION"
  | "TM_SNAPSHOT_CORRUPT"
  | "TM_SNAPSHOT_CONFIG_MISMATCH"
  | "TM_CORE_BAD_PARTITION"
  | "TM_CORE_BAD_EVENT"
  | "TM_CORE_OUT_OF_ORDER";

export class CoreError extends Error {
  constructor(
    readonly code: CoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "CoreError";
  }
}

/** A config error names the path of the bad field and what is allowed. */
export class ConfigError extends CoreError {
  constructor(
    readonly path: string,
    what: string,
  ) {
    super("TM_CONFIG_INVALID", `${path}: ${what}`);
    this.name = "ConfigError";
  }
}
