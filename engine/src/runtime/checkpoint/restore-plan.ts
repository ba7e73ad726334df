/**
 * The restore step every operator takes before its host runs it (docs/operations.md, "Recovery";
 * docs/decisions/0045-operator-host.md, decision 6): open its checkpoint directory, load its
 * checkpoint of the newest completed aligned checkpoint when there is one, else the newest that
 * verifies (reporting corrupt newer ones), check that it belongs to this operator's partitions,
 * session setting and kind (its StateFrame reads the header), make the core from its snapshot, and
 * hand back what the operator's `handleCheckpoint` produced at that cut: its state and its core.
 * The host gives that `Restored<S>` to the operator's `restore` handler before its input starts;
 * on a fresh start there is none and the operator keeps the fresh core it was built with (`cores`).
 *
 * Which checkpoint an operator resumes from is decided here and only here. An engine worker's
 * state may come from checkpoints other workers wrote, split and gathered by partition
 * (docs/decisions/0057-elastic-workers.md): restore-set.ts chooses the cut over every operator's
 * headers, restore-groups.ts puts the worker's state together from it; the same layout restarting
 * keeps the store's own choice.
 */
import type { Logger } from "pino";
import { createCore, restoreCore, withSessions } from "../../core/index.js";
import { isWithSessionsSnapshot } from "../../core/session/index.js";
import type { Checkpoint } from "./checkpoint-codec.js";
import { CheckpointStore, type LoadedCheckpoint } from "./checkpoint-store.js";
import { groupedCoreOf } from "./restore-groups.js";
import type { CoreFactory } from "./core-factory.js";
import type { Restored, StateFrame } from "./state-frames.js";
import type { RestoreEpoch } from "./restore-epoch.js";
import type { EngineConfig } from "../config/config.js";
import { RuntimeError } from "../errors.js";

export type { CoreFactory } from "./core-factory.js";

/** What an operator resumes from: its store, the file chosen, how it makes cores, its state and core. */
export interface RestorePlan<S> {
  readonly store: CheckpointStore;
  /** The file restored from (undefined: a fresh start) and the corrupt newer ones skipped. */
  readonly loaded: LoadedCheckpoint;
  /** How the operator makes its fresh core (the factory given, else the pure core, with sessions when set). */
  readonly cores: CoreFactory;
  /** The operator's state and core at that checkpoint's cut (null: a fresh start). */
  readonly restored: Restored<S> | null;
  /** The restore epoch the operator runs in (restore-epoch.ts). */
  readonly epoch: RestoreEpoch;
}

/**
 * A role's choice of cut over every operator's checkpoints (worker-cut.ts, merge-cut.ts): a fresh
 * start, the operator's own store's choice (`same`), or its state put together from other files.
 */
export type RoleCut<S> = { epoch: RestoreEpoch } & (
  { kind: "fresh" | "same" } | { kind: "cut"; loaded: LoadedCheckpoint; restored: Restored<S> }
);

/** Chooses a role's cut; `check` vets each snapshot restored (its session setting), naming its file. */
export type CutPlanner<S> = (
  factory: CoreFactory,
  check: (snapshot: Uint8Array, file: string) => void,
  completed: number | undefined,
) => Promise<RoleCut<S>>;

/**
 * `cores` undefined: the pure core, with session windows when `config.sessions` is set, and the
 * session setting of the checkpoint checked against the config. A factory given restores its own
 * snapshots.
 */
export async function planRestore<S>(
  config: EngineConfig,
  cores: CoreFactory | undefined,
  /** How this operator kind's state sits in the header (state-frames.ts). */
  frame: StateFrame<S>,
  log: Logger,
  /** The newest completed aligned checkpoint, if any (ADR 0031): its n and this operator's file of it. */
  complete: { n: number; file: string | undefined } | undefined,
  /** The role's choice of cut (none: the operator's own store chooses, in epoch 0). */
  planCut?: CutPlanner<S>,
): Promise<RestorePlan<S>> {
  const store = new CheckpointStore(config.checkpointDir, config.keepCheckpoints);
  await store.open();
  const factory = cores ?? defaultCores(config);
  const check = (snapshot: Uint8Array, file: string): void => {
    if (cores === undefined) checkSessionsMatch(snapshot, file, config.sessions !== null);
  };
  const cut =
    planCut === undefined ? { epoch: { epoch: 0 }, kind: "same" as const } : await planCut(factory, check, complete?.n);
  const { epoch } = cut;
  if (cut.kind === "fresh")
    return {
      store,
      loaded: { checkpoint: undefined, file: undefined, skipped: [] },
      cores: factory,
      restored: null,
      epoch,
    };
  if (cut.kind === "cut") return { store, loaded: cut.loaded, cores: factory, restored: cut.restored, epoch };
  const loaded = await store.load(complete?.file);
  for (const s of loaded.skipped)
    log.error({ file: s.file, reason: s.reason }, "corrupt checkpoint skipped; using an older one");
  const cp = loaded.checkpoint;
  if (!cp) return { store, loaded, cores: factory, restored: null, epoch };
  checkOwnership(cp, loaded.file, config);
  const file = loaded.file as string;
  // A worker's grouped checkpoint (after a rescale) holds its groups' snapshots, each checked.
  const grouped = cp.header.groups !== undefined;
  if (!grouped) check(cp.snapshot, file);
  const state = frame.read(cp.header, loaded.file);
  const core = grouped ? groupedCoreOf(config, factory, cp, file, check) : factory.restore(config.core, cp.snapshot);
  log.info({ file: loaded.file, logTime: cp.header.logTime, offsets: cp.header.offsets }, "restored checkpoint");
  return { store, loaded, cores: factory, restored: { state, core, logTime: cp.header.logTime }, epoch };
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
export function checkSessionsMatch(snapshot: Uint8Array, file: string | undefined, sessionsOn: boolean): void {
  const written = isWithSessionsSnapshot(snapshot);
  if (written === sessionsOn) return;
  const was = written ? "on" : "off";
  throw new RuntimeError(
    "TM_CHECKPOINT_MISMATCH",
    `checkpoint ${file} was written with session windows ${was}, but this engine runs with them ${sessionsOn ? "on" : "off"}; ` +
      `start with sessions ${was} again (--sessions ${written ? "on" : "off"}), or use a fresh --data directory`,
  );
}
