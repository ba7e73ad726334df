import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { workerPartitions } from "./config/role-configs.js";

type Log = (line: string) => void;

/**
 * What `tidemark up --workers N` restores from (docs/operations.md, "Rescaling";
 * docs/decisions/0057-elastic-workers.md), said before any role starts: a savepoint given with
 * --from-savepoint; else, when the data directory's newest consistent cut was written by another
 * worker layout, that cut — a clean stop's final checkpoints, which each worker splits and gathers by
 * partition itself, or an aligned checkpoint n, which every role must restore together: it is saved
 * as a savepoint under <data>/savepoints and every role is started from it. Returns the savepoint
 * every engine and merge role restores from, if any.
 */
export async function restoreForUp(
  data: string,
  partitionCount: number,
  workers: number,
  fromSavepoint: string | undefined,
  log: Log,
): Promise<string | undefined> {
  if (fromSavepoint !== undefined) {
    log(`restoring every role from savepoint ${fromSavepoint}, with ${workers} worker${workers === 1 ? "" : "s"}`);
    return fromSavepoint;
  }
  const rt = await import("@tidemark/engine/runtime");
  const root = join(data, "checkpoints");
  const scan = await rt.scanCheckpoints(root);
  const { epoch } = await rt.restoreEpoch(root, scan.found, null);
  const all = Array.from({ length: partitionCount }, (_, p) => p);
  const set = rt.chooseRestoreSet(scan.found, {
    operator: "(up)",
    partitions: all,
    partitionCount,
    epoch,
    aligned: true,
  });
  if (set.kind !== "cut") return undefined;
  const layout = (lists: readonly (readonly number[])[]): string =>
    lists
      .map((ps) => rt.formatPartitionList(ps))
      .sort()
      .join(" ");
  const ranges = Array.from({ length: workers }, (_, i) =>
    rt.parsePartitionList(workerPartitions(partitionCount, workers, i), partitionCount),
  );
  const written = set.files.map((a) => a.found.header.partitions);
  const was = `${written.length} worker${written.length === 1 ? "" : "s"} (${set.files.map((a) => a.found.operator).join(", ")})`;
  const now = `${workers} worker${workers === 1 ? "" : "s"}`;
  if (layout(written) === layout(ranges)) return undefined;
  if (!set.cut.startsWith("aligned")) {
    log(`the data directory was written by ${was}; restoring ${now} from ${set.cut}, split and gathered by partition`);
    return undefined;
  }
  const dir = await saveCut(rt, data, partitionCount);
  const cut = (await rt.readSavepoint(dir)).manifest.cut;
  log(
    `the data directory was written by ${was}, and its newest consistent cut is ${cut}: ` +
      `saved as savepoint ${dir}; restoring every role from it with ${now}`,
  );
  return dir;
}

/**
 * The newest consistent cut saved as `<data>/savepoints/rescale-epoch<e>-<n>`: written under a temp
 * name, then renamed; a savepoint of the same cut left by an earlier `up` is used as it is.
 */
async function saveCut(
  rt: typeof import("@tidemark/engine/runtime"),
  data: string,
  partitionCount: number,
): Promise<string> {
  const base = join(data, "savepoints");
  const tmp = join(base, `.rescale-${process.pid}`);
  await rm(tmp, { recursive: true, force: true });
  const manifest = await rt.offlineSavepoint(data, tmp, partitionCount);
  const dir = join(base, `rescale-epoch${manifest.epoch}-${manifest.n}`);
  if (existsSync(join(dir, "savepoint.json"))) await rm(tmp, { recursive: true, force: true });
  else {
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  }
  return dir;
}
