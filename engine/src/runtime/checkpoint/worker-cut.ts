/**
 * The restore step of an engine worker whose partitions' state may come from checkpoints other
 * workers wrote (docs/decisions/0057-elastic-workers.md): every operator's headers are read
 * (checkpoint-scan.ts), the cut chosen (restore-set.ts), its files verified, and the worker's state
 * put together from them (restore-groups.ts). "same": the same layout restarts, and the operator's
 * own store chooses, as it always has (restore-plan.ts).
 */
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { coreAggregates } from "../../core/create-core.js";
import type { EngineConfig } from "../config/config.js";
import { decodeCheckpoint, type Checkpoint } from "./checkpoint-codec.js";
import { scanCheckpoints } from "./checkpoint-scan.js";
import type { LoadedCheckpoint } from "./checkpoint-store.js";
import type { CoreFactory } from "./restore-plan.js";
import { restoreFromCut } from "./restore-groups.js";
import { chooseRestoreSet, type Assigned } from "./restore-set.js";
import type { Restored } from "./state-frames.js";
import type { WorkerState } from "./worker-state.js";

/**
 * A worker's cut over every operator's checkpoints (restore-set.ts): "fresh", "same" (the store
 * chooses, as before), or its state put together from the cut's files. A chosen file that does not
 * verify is left out and the cut chosen again.
 */
export async function planWorkerCut(
  config: EngineConfig,
  factory: CoreFactory,
  /** Checks a group's snapshot before it is restored (its session setting), naming its file. */
  check: (snapshot: Uint8Array, file: string) => void,
  log: Logger,
  completed: number | undefined,
): Promise<"fresh" | "same" | { loaded: LoadedCheckpoint; restored: Restored<WorkerState> }> {
  const scan = await scanCheckpoints(dirname(config.checkpointDir));
  const skipped = [...scan.unreadable];
  for (;;) {
    const want = { operator: config.worker, partitions: config.partitions, partitionCount: config.partitionCount, epoch: 0, completed };
    const set = chooseRestoreSet(scan.found, want);
    if (set.kind !== "cut") return set.kind;
    const taken = await verify(set.files, skipped);
    if (taken === null) {
      const bad = new Set(skipped.map((s) => s.file));
      scan.found = scan.found.filter((f) => !bad.has(f.file));
      continue;
    }
    for (const s of skipped) log.error({ file: s.file, reason: s.reason }, "corrupt checkpoint skipped; choosing the cut again");
    const restored = restoreFromCut(config, factory, coreAggregates(config.core), taken, set.fresh, check);
    const resumeAfter = Object.fromEntries(config.partitions.map((p, i) => [String(p), restored.state.offsets[i]?.lastSeq ?? 0]));
    const files = taken.map((t) => ({ file: t.file, partitions: [...t.partitions] }));
    const cut = { cut: set.cut, files, fresh: set.fresh, resumeAfter };
    log.info({ cut: set.cut, files, fresh: set.fresh, resumeAfter }, `restored from ${set.cut}, written by other workers`);
    const loaded: LoadedCheckpoint = { checkpoint: undefined, file: taken[0]?.file, skipped, cut };
    return { loaded, restored };
  }
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
      out.push({ cp: decodeCheckpoint(await readFile(a.found.file), a.found.file), partitions: a.partitions, file: a.found.file });
    } catch (err) {
      skipped.push({ file: a.found.file, reason: (err as Error).message });
      ok = false;
    }
  }
  return ok ? out : null;
}

