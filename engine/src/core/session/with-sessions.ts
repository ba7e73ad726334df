/**
 * The window core and the session operator as one StreamCore (docs/decisions/0009, "Wiring"):
 * every input goes to both, in that order, with the same output; the snapshot frames both
 * snapshots ("TMWS" · version · core bytes · session bytes · CRC-32), taken at the same input
 * position. `withSessions(settings)` has the shape of the runtime's CoreFactory
 * (`startEngine(config, { cores: withSessions(config.sessions) })`).
 */
import type { TelemetryEvent } from "../../protocol.js";
import { ByteReader, ByteWriter } from "../snapshot/byte-codec.js";
import { createCore, restoreCore } from "../create-core.js";
import { CoreError } from "../errors.js";
import type { CoreConfig, CoreOutput, CoreStatus, SnapshotSteps, StreamCore } from "../types.js";
import { createSessionOperator, restoreSessionOperator, type SessionCore } from "./create-session-operator.js";
import { validateSessionConfig } from "./session-config.js";
import { sealSteps, unseal } from "./sealed-bytes.js";
import { adoptBytes, allSteps, snapshotStepsOf } from "../snapshot/snapshot-steps.js";
import type { SessionStatus } from "./session-status.js";

const MAGIC = [0x54, 0x4d, 0x57, 0x53];
export const WITH_SESSIONS_SNAPSHOT_VERSION = 1;

/** The window core's status, with the session operator's beside it. */
export interface CoreWithSessionsStatus extends CoreStatus {
  sessions: SessionStatus;
}

export interface CoreWithSessions extends StreamCore {
  status(): CoreWithSessionsStatus;
  snapshotSteps(): SnapshotSteps;
}

function both(core: StreamCore, sessions: SessionCore): CoreWithSessions {
  return {
    event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
      core.event(partition, e, out);
      sessions.event(partition, e, out);
    },
    heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
      core.heartbeat(partition, ingestTs, out);
      sessions.heartbeat(partition, ingestTs, out);
    },
    finish(out: CoreOutput): void {
      core.finish(out);
      sessions.finish(out);
    },
    delayQuantiles: (partition: number) => core.delayQuantiles?.(partition),
    retire: (partitions: readonly number[]) => {
      core.retire?.(partitions);
      sessions.retire?.(partitions);
    },
    advance: (logTime: number, out: CoreOutput) => {
      core.advance?.(logTime, out);
      sessions.advance?.(logTime, out);
    },
    status: () => ({ ...core.status(), sessions: sessions.status() }),
    snapshot: () => allSteps(snapshotSteps(core, sessions)),
    snapshotSteps: () => snapshotSteps(core, sessions),
  };
}

/** Both snapshots framed, in steps (docs/decisions/0016-checkpoints-without-pause.md). */
function* snapshotSteps(core: StreamCore, sessions: SessionCore): SnapshotSteps {
  const w = new ByteWriter();
  for (const b of MAGIC) w.uint(b);
  w.uint(WITH_SESSIONS_SNAPSHOT_VERSION);
  // Both bodies are taken as they are, not copied: each is made for this snapshot alone.
  adoptBytes(w, [yield* snapshotStepsOf(core)]);
  adoptBytes(w, yield* sessions.snapshotPieces());
  return yield* sealSteps(w);
}

/** True when `snapshot` was written by `withSessions` (its magic; nothing else is checked). */
export function isWithSessionsSnapshot(snapshot: Uint8Array): boolean {
  try {
    const r = new ByteReader(snapshot);
    return MAGIC.every((b) => r.uint() === b);
  } catch {
    return false;
  }
}

/** Creates and restores the window core together with sessions (settings validated once, here). */
export function withSessions(settings: unknown = {}): {
  create(config: CoreConfig): CoreWithSessions;
  restore(config: CoreConfig, snapshot: Uint8Array): CoreWithSessions;
} {
  const valid = validateSessionConfig(settings);
  return {
    create: (config) => both(createCore(config), createSessionOperator(config, valid)),
    restore(config, snapshot) {
      const r = unseal(snapshot, "core+sessions snapshot");
      for (const b of MAGIC)
        if (r.uint() !== b)
          throw new CoreError(
            "TM_SNAPSHOT_CORRUPT",
            "snapshot is not a core+sessions snapshot: restore it with the factory that wrote it",
          );
      const version = r.uint();
      if (version !== WITH_SESSIONS_SNAPSHOT_VERSION)
        throw new CoreError(
          "TM_SNAPSHOT_VERSION",
          `core+sessions snapshot version ${version} is not ${WITH_SESSIONS_SNAPSHOT_VERSION}: start without it or use a matching tidemark`,
        );
      const core = restoreCore(config, r.bytes());
      const sessions = restoreSessionOperator(config, valid, r.bytes());
      if (!r.done)
        throw new CoreError(
          "TM_SNAPSHOT_CORRUPT",
          "core+sessions snapshot has trailing bytes: restore from an older checkpoint",
        );
      return both(core, sessions);
    },
  };
}
