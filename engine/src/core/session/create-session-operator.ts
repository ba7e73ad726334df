/** Entry points of the session operator: fresh, or restored from a snapshot. */
import { validateCoreConfig } from "../validate-config.js";
import type { CoreConfig, CoreOutput, SnapshotSteps, StreamCore } from "../types.js";
import type { TelemetryEvent } from "../../protocol.js";
import { ConfigError } from "../errors.js";
import { validateSessionConfig } from "./session-config.js";
import { MAX_SESSION_POLICIES } from "./session-place.js";
import { SessionOperator } from "./session-operator.js";
import { decodeSessionSnapshot } from "./session-snapshot.js";
import type { SessionStatus } from "./session-status.js";
import type { PieceSteps } from "./sealed-bytes.js";

/** The session operator as its drivers see it: StreamCore with a richer status. */
export interface SessionCore extends StreamCore {
  status(): SessionStatus;
  snapshotSteps(): SnapshotSteps;
  /** snapshotSteps() with the bytes left in pieces (their join): for a snapshot framing this one. */
  snapshotPieces(): PieceSteps;
}

function drive(op: SessionOperator): SessionCore {
  return {
    event: (partition: number, e: TelemetryEvent, out: CoreOutput) => op.event(partition, e, out),
    heartbeat: (partition: number, ingestTs: number, out: CoreOutput) => op.heartbeat(partition, ingestTs, out),
    finish: (out: CoreOutput) => op.finish(out),
    status: () => op.status(),
    snapshot: () => op.snapshot(),
    snapshotSteps: () => op.snapshotSteps(),
    snapshotPieces: () => op.snapshotPieces(),
  };
}

/**
 * A fresh session operator over the same core config the StreamCore gets (partitions, policies),
 * with session settings (gap, length cap, key cap); both are validated and frozen here.
 */
export function createSessionOperator(config: CoreConfig, sessions: unknown = {}): SessionCore {
  return drive(new SessionOperator(validated(config), validateSessionConfig(sessions)));
}

/** The core config, validated, with no more policies than sessions support (the reference is one more). */
function validated(config: CoreConfig): CoreConfig {
  const core = validateCoreConfig(config);
  if (core.policies.length + 1 > MAX_SESSION_POLICIES)
    throw new ConfigError(
      "policies",
      `session windows support at most ${MAX_SESSION_POLICIES - 1} policies, got ${core.policies.length}: remove policies or turn sessions off`,
    );
  return core;
}

/**
 * An operator restored from `snapshot()` bytes. Throws CoreError TM_SNAPSHOT_CORRUPT,
 * TM_SNAPSHOT_VERSION or TM_SNAPSHOT_CONFIG_MISMATCH.
 */
export function restoreSessionOperator(config: CoreConfig, sessions: unknown, snapshot: Uint8Array): SessionCore {
  const core = validated(config);
  const valid = validateSessionConfig(sessions);
  return drive(new SessionOperator(core, valid, decodeSessionSnapshot(core, valid, snapshot)));
}
