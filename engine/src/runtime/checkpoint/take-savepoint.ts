/**
 * Taking a savepoint (savepoint.ts; docs/decisions/0057-elastic-workers.md): online, the checkpoint
 * coordinator is asked for an aligned checkpoint now and the files of the first one completed after
 * the request are copied; offline (every role stopped), the newest consistent cut on disk is — a
 * clean stop's final checkpoints, else the newest aligned checkpoint n that covers every partition,
 * with the merge stage's files of the same n. Either way the savepoint begins the next restore epoch.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { join } from "node:path";
import { SUBJECT_SAVEPOINT_REQUEST } from "../../protocol.js";
import { RuntimeError } from "../errors.js";
import { lastComplete } from "./checkpoint-notices.js";
import { readHeader, scanCheckpoints } from "./checkpoint-scan.js";
import { mergeLayoutOf, newestCommonBarrier, newestOf } from "./merge-sources.js";
import { restoreEpoch } from "./restore-epoch.js";
import { chooseRestoreSet, type FoundCheckpoint } from "./restore-set.js";
import { cutPositions, writeSavepoint, type SavepointManifest } from "./savepoint.js";

const POLL_MS = 200;

export interface OnlineSavepoint {
  to: string;
  timeoutMs: number;
  /** A line of progress while it waits. */
  progress: (line: string) => void;
}

export async function takeSavepoint(nc: NatsConnection, o: OnlineSavepoint): Promise<SavepointManifest> {
  let after: number;
  try {
    const reply = await nc.request(SUBJECT_SAVEPOINT_REQUEST, "", { timeout: 5_000 });
    after = Number((JSON.parse(reply.string()) as { after?: unknown }).after);
  } catch (err) {
    throw new RuntimeError(
      "TM_SAVEPOINT_INVALID",
      `no checkpoint coordinator answered (${(err as Error).message}): it runs in the merge operator of merge partition 0; ` +
        `start it, or with every role stopped take the savepoint from disk (tidemark savepoint --offline --data DIR --to DIR)`,
    );
  }
  const deadline = Date.now() + o.timeoutMs;
  let said = 0;
  for (;;) {
    const c = await lastComplete(nc);
    if (c !== null && c.n > after) return copyComplete(c.n, c.operators, o.to);
    if (Date.now() > deadline)
      throw new RuntimeError(
        "TM_SAVEPOINT_INVALID",
        `no aligned checkpoint after ${after} completed within ${o.timeoutMs / 1000} s: see the merge operator's log ` +
          `for why (a worker stopped or held back), or raise --timeout`,
      );
    if (Date.now() - said >= 2_000) {
      said = Date.now();
      o.progress(`waiting for aligned checkpoint ${after + 1} to complete`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function copyComplete(n: number, operators: Record<string, string>, to: string): Promise<SavepointManifest> {
  const found: FoundCheckpoint[] = [];
  for (const [operator, file] of Object.entries(operators)) {
    try {
      found.push({ operator, file, header: await readHeader(file) });
    } catch (err) {
      throw new RuntimeError(
        "TM_SAVEPOINT_INVALID",
        `checkpoint ${n}'s file of ${operator} cannot be read (${(err as Error).message}): run tidemark savepoint on the ` +
          `host that holds the data directory, and keep more checkpoints (--keep-checkpoints) if it was pruned`,
      );
    }
  }
  return write(to, found, `aligned checkpoint ${n}`, n);
}

/** The newest consistent cut of the data directory `data` (every role stopped). */
export async function offlineSavepoint(data: string, to: string, partitionCount: number): Promise<SavepointManifest> {
  const root = join(data, "checkpoints");
  const scan = await scanCheckpoints(root);
  const { epoch, savepoint } = await restoreEpoch(root, scan.found, null);
  const all = Array.from({ length: partitionCount }, (_, p) => p);
  const mergeFound = scan.found.filter((f) => f.header.merge !== undefined && (f.header.epoch ?? 0) === epoch);
  // The newest n the merge stage aligned (its file of n exists) comes first: workers may have cut a later one it never completed.
  const completed = newestAlignedByAll(mergeFound);
  const want = { operator: "(savepoint)", partitions: all, partitionCount, epoch, aligned: true, completed };
  const set = chooseRestoreSet(scan.found, want);
  if (set.kind !== "cut")
    throw new RuntimeError(
      "TM_SAVEPOINT_INVALID",
      `${root} holds no worker checkpoint of restore epoch ${epoch}: nothing to save`,
    );
  if (set.fresh.length > 0 && savepoint !== undefined)
    throw new RuntimeError(
      "TM_SAVEPOINT_INVALID",
      `partitions [${set.fresh.join(",")}] have no checkpoint since savepoint ${savepoint} began epoch ${epoch}: ` +
        `restore from that savepoint, or run the roles until they checkpoint`,
    );
  const workers = set.files.map((a) => a.found);
  const n = set.cut.startsWith("aligned") ? (workers[0]?.header.barrier ?? null) : null;
  const merges = mergeFiles(mergeFound, n);
  return write(to, [...workers, ...merges], set.cut, n);
}

/** The newest barrier n every merge partition (of the newest layout) has a file of. */
function newestAlignedByAll(files: readonly FoundCheckpoint[]): number | undefined {
  const top = newestOf(files);
  if (top === undefined) return undefined;
  const of = mergeLayoutOf(top).of;
  return newestCommonBarrier(
    files,
    of,
    Array.from({ length: of }, (_, m) => m),
  );
}

/** The merge stage's files of aligned checkpoint n, or (a clean stop) its newest layout's newest per merge partition. */
function mergeFiles(files: readonly FoundCheckpoint[], n: number | null): FoundCheckpoint[] {
  if (files.length === 0) return [];
  const pick = n === null ? files : files.filter((f) => f.header.barrier === n);
  if (pick.length === 0)
    throw new RuntimeError(
      "TM_SAVEPOINT_INVALID",
      `the merge stage has no checkpoint of aligned checkpoint ${n}: it was pruned or never written; keep more checkpoints (--keep-checkpoints)`,
    );
  const of = mergeLayoutOf(newestOf(pick) as FoundCheckpoint).of;
  const out: FoundCheckpoint[] = [];
  for (let m = 0; m < of; m++) {
    const best = newestOf(pick.filter((f) => mergeLayoutOf(f).of === of && mergeLayoutOf(f).m === m));
    if (best === undefined)
      throw new RuntimeError(
        "TM_SAVEPOINT_INVALID",
        `the merge stage has no checkpoint of merge partition ${m} of ${of}${n === null ? "" : ` at aligned checkpoint ${n}`}`,
      );
    out.push(best);
  }
  return out;
}

async function write(
  to: string,
  found: readonly FoundCheckpoint[],
  cut: string,
  n: number | null,
): Promise<SavepointManifest> {
  const headers = found.map((f) => f.header);
  const merges = found.filter((f) => f.header.merge !== undefined);
  const files = found.map((f) =>
    f.header.merge === undefined
      ? { found: f, role: "engine" as const }
      : { found: f, role: "merge" as const, mergePartition: mergeLayoutOf(f).m },
  );
  return writeSavepoint(to, files, {
    epoch: Math.max(0, ...headers.map((h) => h.epoch ?? 0)) + 1,
    cut,
    n,
    partitionCount: headers[0]?.partitionCount ?? 0,
    mergePartitions: merges.length === 0 ? 1 : mergeLayoutOf(merges[0] as FoundCheckpoint).of,
    cutTo: cutPositions(headers),
  });
}
