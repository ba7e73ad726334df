/**
 * The restore step of an engine worker whose partitions' state may come from checkpoints other
 * workers wrote (docs/decisions/0057-elastic-workers.md): every operator's headers are read
 * (checkpoint-scan.ts), the cut chosen (restore-set.ts), its files verified, and the worker's state
 * put together from them (restore-groups.ts). "same": the same layout restarts, and the operator's
 * own store chooses, as it always has (restore-plan.ts).
 */
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { coreAggregates } from "../../core/create-core.js";
import type { EngineConfig } from "../config/config.js";
import { decodeCheckpoint, type Checkpoint } from "./checkpoint-codec.js";
import type { LoadedCheckpoint } from "./checkpoint-store.js";
import type { CoreFactory, RoleCut } from "./restore-plan.js";
import { restoreFromCut } from "./restore-groups.js";
import { chooseRestoreSet, type Assigned, type RestoreSet } from "./restore-set.js";
import { roleEpoch } from "./restore-epoch.js";
import { savepointCheckpoints, type SavepointCheckpoints } from "./savepoint.js";
import type { WorkerState } from "./worker-state.js";

/**
 * A worker's cut over every operator's checkpoints of its restore epoch (restore-set.ts,
 * restore-epoch.ts): "fresh", "same" (the store chooses, as before), or its state put together
 * from the cut's files; partitions no checkpoint of the epoch holds come from the savepoint that
 * began it. A chosen file that does not verify is left out and the cut chosen again.
 */
export async function planWorkerCut(
  config: EngineConfig,
  factory: CoreFactory,
  /** Checks a group's snapshot before it is restored (its session setting), naming its file. */
  check: (snapshot: Uint8Array, file: string) => void,
  log: Logger,
  completed: number | undefined,
): Promise<RoleCut<WorkerState>> {
  const { scan, restore } = await roleEpoch(config);
  const { epoch, savepoint: began } = restore;
  const from = began === undefined ? null : await savepointCheckpoints(began);
  const skipped = [...scan.unreadable, ...(from?.unreadable ?? [])];
  const base = { operator: config.worker, partitionCount: config.partitionCount, completed };
  for (;;) {
    const set = chooseRestoreSet(scan.found, { ...base, partitions: config.partitions, epoch });
    const rest = from === null ? null : leftFor(set, config.partitions);
    const spSet =
      rest === null || rest.length === 0
        ? null
        : chooseRestoreSet((from as SavepointCheckpoints).found, { ...base, partitions: rest, aligned: true });
    const cut = withSavepoint(set, spSet, from?.label);
    if (cut === null) return { epoch: restore, kind: set.kind as "fresh" | "same" };
    const taken = await verify(cut.files, skipped);
    if (taken === null) {
      const bad = new Set(skipped.map((s) => s.file));
      scan.found = scan.found.filter((f) => !bad.has(f.file));
      if (from !== null) from.found = from.found.filter((f) => !bad.has(f.file));
      continue;
    }
    for (const s of skipped)
      log.error({ file: s.file, reason: s.reason }, "corrupt checkpoint skipped; choosing the cut again");
    const restored = restoreFromCut(config, factory, coreAggregates(config.core), taken, cut.fresh, check);
    const resumeAfter = Object.fromEntries(
      config.partitions.map((p, i) => [String(p), restored.state.offsets[i]?.lastSeq ?? 0]),
    );
    const files = taken.map((t) => ({ file: t.file, partitions: [...t.partitions] }));
    const restoredCut = { cut: cut.cut, files, fresh: cut.fresh, resumeAfter };
    log.info({ cut: cut.cut, files, fresh: cut.fresh, resumeAfter, epoch }, `restored from ${cut.cut}`);
    const loaded: LoadedCheckpoint = { checkpoint: undefined, file: taken[0]?.file, skipped, cut: restoredCut };
    return { epoch: restore, kind: "cut", loaded, restored };
  }
}

/** The partitions a set leaves without state (all of them when fresh; none when the same layout goes on). */
function leftFor(set: RestoreSet, partitions: readonly number[]): number[] {
  if (set.kind === "fresh") return [...partitions];
  return set.kind === "cut" ? set.fresh : [];
}

/** The epoch's cut and the savepoint's for what it leaves; null when neither restores anything. */
function withSavepoint(
  set: RestoreSet,
  sp: RestoreSet | null,
  label: string | undefined,
): { cut: string; files: Assigned[]; fresh: number[] } | null {
  const spCut = sp?.kind === "cut" ? sp : null;
  if (set.kind !== "cut" && spCut === null) return null;
  if (set.kind !== "cut")
    return {
      cut: label as string,
      files: (spCut as { files: Assigned[] }).files,
      fresh: (spCut as { fresh: number[] }).fresh,
    };
  if (spCut === null) return set;
  return { cut: `${set.cut} and ${label as string}`, files: [...set.files, ...spCut.files], fresh: spCut.fresh };
}

/** The cut's files decoded and verified; null (the bad ones added to `skipped`) when one is not. */
async function verify(
  files: readonly Assigned[],
  skipped: Array<{ file: string; reason: string }>,
): Promise<Array<{ cp: Checkpoint; partitions: number[]; file: string }> | null> {
  const out: Array<{ cp: Checkpoint; partitions: number[]; file: string }> = [];
  let ok = true;
  for (const a of files) {
    try {
      out.push({
        cp: decodeCheckpoint(await readFile(a.found.file), a.found.file),
        partitions: a.partitions,
        file: a.found.file,
      });
    } catch (err) {
      skipped.push({ file: a.found.file, reason: (err as Error).message });
      ok = false;
    }
  }
  return ok ? out : null;
}
