/**
 * The restore epoch of a data directory (docs/decisions/0057-elastic-workers.md): 0 until a role is
 * started from a savepoint, then the savepoint's epoch, recorded in `checkpoints/restore-epoch.json`
 * with the savepoint's directory. Every checkpoint a role writes carries its epoch; the restore step
 * reads only the current epoch's, and takes partitions none of them holds from the savepoint that
 * began it — so a role restarted with or without `--from-savepoint` goes on where its epoch is, and
 * never back to a state the savepoint replaced. Entering an epoch below the directory's is refused.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { scanCheckpoints, type Scan } from "./checkpoint-scan.js";
import { RuntimeError } from "../errors.js";
import { writeJsonDurably } from "./durable-file.js";
import type { FoundCheckpoint } from "./restore-set.js";
import { readSavepoint, type Savepoint } from "./savepoint.js";

const FILE = "restore-epoch.json";

export interface RestoreEpoch {
  epoch: number;
  /** The savepoint that began the epoch (absolute directory); absent for epoch 0. */
  savepoint?: string;
  /**
   * The savepoint's cut, per TM_EVENTS partition: where its stage-1 partials stood (savepoint.ts).
   * A merge operator ignores a batch of an older epoch reporting past it: the restored workers
   * publish that part again.
   */
  cutTo?: Record<string, number | null>;
}

async function readMarker(root: string): Promise<RestoreEpoch | null> {
  try {
    return JSON.parse(await readFile(join(root, FILE), "utf8")) as RestoreEpoch;
  } catch {
    return null;
  }
}

/**
 * The epoch a role restores in: the directory's (its marker, or its checkpoints' newest), or the
 * savepoint's when one is given and newer — recorded before anything of it is written.
 */
export async function restoreEpoch(
  root: string,
  found: readonly FoundCheckpoint[],
  savepoint: Savepoint | null,
): Promise<RestoreEpoch> {
  const marker = await readMarker(root);
  const written = Math.max(0, ...found.map((f) => f.header.epoch ?? 0));
  const current: RestoreEpoch = marker !== null && marker.epoch >= written ? marker : { epoch: written };
  if (savepoint === null) return current;
  const e = savepoint.manifest.epoch;
  if (e === current.epoch && (current.savepoint === undefined || current.savepoint === savepoint.dir))
    return { epoch: e, savepoint: savepoint.dir, cutTo: savepoint.manifest.cutTo };
  if (e <= current.epoch)
    throw new RuntimeError(
      "TM_SAVEPOINT_INVALID",
      `--from-savepoint ${savepoint.dir}: it begins restore epoch ${e}, but ${root} is already in epoch ${current.epoch}` +
        `${current.savepoint ? ` (from savepoint ${current.savepoint})` : ""}; ` +
        `restore it into a fresh --data directory, or take a new savepoint (tidemark savepoint --to DIR) and restore that`,
    );
  const next: RestoreEpoch = { epoch: e, savepoint: savepoint.dir, cutTo: savepoint.manifest.cutTo };
  await writeJsonDurably(join(root, FILE), next);
  return next;
}

/** A role's checkpoints (every operator's in its data directory) and the restore epoch it runs in. */
export async function roleEpoch(config: {
  checkpointDir: string;
  fromSavepoint: string | null;
}): Promise<{ scan: Scan; restore: RestoreEpoch }> {
  const root = dirname(config.checkpointDir);
  const scan = await scanCheckpoints(root);
  const savepoint = config.fromSavepoint === null ? null : await readSavepoint(config.fromSavepoint);
  return { scan, restore: await restoreEpoch(root, scan.found, savepoint) };
}
