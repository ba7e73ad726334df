/** Errors of the engine runtime, each with a stable code. Messages say what to do. */
export type RuntimeErrorCode =
  | "TM_ENGINE_BAD_CONFIG"
  | "TM_ENGINE_BAD_PARTITIONS"
  | "TM_ENGINE_MAX_PAYLOAD"
  | "TM_CHECKPOINT_CORRUPT"
  | "TM_CHECKPOINT_MISMATCH"
  | "TM_CHECKPOINT_WRITE_FAILED"
  /** Some partitions have checkpoints but no one consistent cut covers them (docs/decisions/0057-elastic-workers.md). */
  | "TM_CHECKPOINT_UNCOVERED"
  /** Another layout's aligned checkpoint is the newest cut: every role must restore it, from a savepoint (ADR 0057). */
  | "TM_CHECKPOINT_ROLLBACK"
  /** The data directory's checkpoints were written with another partitionCount (ADR 0057). */
  | "TM_PARTITION_COUNT_CHANGED"
  | "TM_SAVEPOINT_INVALID"
  | "TM_SAVEPOINT_VERSION"
  | "TM_BACKFILL_BAD_RECORD"
  | "TM_BACKFILL_INPUT";

export class RuntimeError extends Error {
  constructor(
    readonly code: RuntimeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "RuntimeError";
  }
}

/** TM_ENGINE_BAD_CONFIG naming where the setting came from and what it must be. */
export function badSetting(where: string, allowed: string, got: unknown): RuntimeError {
  return new RuntimeError("TM_ENGINE_BAD_CONFIG", `${where} must be ${allowed}, got ${JSON.stringify(got)}`);
}
