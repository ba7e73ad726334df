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
  const dir = join(data, "savepoints", `rescale-epoch${epoch + 1}-${set.cut.replace(/\D+/g, "")}`);
  const manifest = await rt.offlineSavepoint(data, dir, partitionCount);
  log(
    `the data directory was written by ${was}, and its newest consistent cut is ${manifest.cut}: ` +
      `saved as savepoint ${dir}; restoring every role from it with ${now}`,
  );
  return dir;
}
