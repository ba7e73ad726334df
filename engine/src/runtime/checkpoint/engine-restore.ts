/**
 * The engine's first step (docs/operations.md, "Recovery"): open its checkpoint directory, load its
 * checkpoint of the newest completed aligned checkpoint when there is one, else the newest that
 * verifies (reporting corrupt newer ones), check that it belongs to this
 * worker's partitions and session setting, and make the core from it, or a fresh one.
 */
import type { Logger } from "pino";
import { createCore, restoreCore, withSessions } from "../../core/index.js";
import { isWithSessionsSnapshot } from "../../core/session/index.js";
import type { CoreConfig, StreamCore } from "../../core/types.js";
import type { Checkpoint } from "./checkpoint-codec.js";
import { CheckpointStore, type LoadedCheckpoint } from "./checkpoint-store.js";
import type { EngineConfig } from "../config/config.js";
import { RuntimeError } from "../errors.js";

/** How the engine makes its core: fresh, or from snapshot bytes. */
export interface CoreFactory {
  create(config: CoreConfig): StreamCore;
  restore(config: CoreConfig, snapshot: Uint8Array): StreamCore;
}

export interface RestoredEngine {
  readonly store: CheckpointStore;
  readonly loaded: LoadedCheckpoint;
  readonly core: StreamCore;
}

/**
 * `cores` undefined: the pure core, with session windows when `config.sessions` is set, and the
 * session setting of the checkpoint checked against the config. A factory given restores its own
 * snapshots.
 */
export async function restoreEngine(
  config: EngineConfig,
  cores: CoreFactory | undefined,
  log: Logger,
  /** This operator's file of the newest completed aligned checkpoint, if any (ADR 0031). */
  preferred?: string,
): Promise<RestoredEngine> {
  const store = new CheckpointStore(config.checkpointDir, config.keepCheckpoints);
  await store.open();
  const loaded = await store.load(preferred);
  for (const s of loaded.skipped)
    log.error({ file: s.file, reason: s.reason }, "corrupt checkpoint skipped; using an older one");
  const cp = loaded.checkpoint;
  if (!cp) return { store, loaded, core: (cores ?? defaultCores(config)).create(config.core) };
  checkOwnership(cp, loaded.file, config);
  if (cores === undefined) checkSessionsMatch(cp.snapshot, loaded.file, config.sessions !== null);
  const core = (cores ?? defaultCores(config)).restore(config.core, cp.snapshot);
  log.info({ file: loaded.file, logTime: cp.header.logTime, offsets: cp.header.offsets }, "restored checkpoint");
  return { store, loaded, core };
}

function defaultCores(config: EngineConfig): CoreFactory {
  return config.sessions ? withSessions(config.sessions) : { create: createCore, restore: restoreCore };
}

/** A checkpoint restores only into a worker owning the same partitions of the same count. */
function checkOwnership(cp: Checkpoint, file: string | undefined, config: EngineConfig): void {
  const { partitions, partitionCount } = cp.header;
  if (partitions.join(",") === config.partitions.join(",") && partitionCount === config.partitionCount) return;
  throw new RuntimeError(
    "TM_CHECKPOINT_MISMATCH",
    `checkpoint ${file} belongs to partitions [${partitions.join(",")}] of ${partitionCount}, ` +
      `but this worker owns [${config.partitions.join(",")}] of ${config.partitionCount}; ` +
      `use the worker id and --partitions it was written with, or another --data directory`,
  );
}

/** A checkpoint written with sessions on does not restore with them off, nor the other way round. */
function checkSessionsMatch(snapshot: Uint8Array, file: string | undefined, sessionsOn: boolean): void {
  const written = isWithSessionsSnapshot(snapshot);
  if (written === sessionsOn) return;
  const was = written ? "on" : "off";
  throw new RuntimeError(
    "TM_CHECKPOINT_MISMATCH",
    `checkpoint ${file} was written with session windows ${was}, but this engine runs with them ${sessionsOn ? "on" : "off"}; ` +
      `start with sessions ${was} again (--sessions ${written ? "on" : "off"}), or use a fresh --data directory`,
  );
}
