/**
 * Savepoints (docs/decisions/0057-elastic-workers.md; docs/operations.md, "Rescaling"): one
 * consistent cut of the whole dataflow — every worker's and every merge operator's checkpoint file
 * of one completed aligned checkpoint n, or of a clean stop — copied into a directory of its own,
 * kept until deleted, and restored by every role at any parallelism (`--from-savepoint DIR`).
 *
 *   DIR/savepoint.json              the manifest (format 1, below)
 *   DIR/<operator id>/<file>.tmck   each operator's checkpoint file, unchanged (its own version)
 *
 * A savepoint starts a new restore epoch: the roles restored from it write checkpoints of that
 * epoch and ignore what any role of an older epoch still publishes; a later restart without the
 * flag goes on in the newest epoch (restore-epoch.ts). A newer tidemark reads every older format
 * (and every older checkpoint version); a manifest of a newer format is refused naming it.
 */
import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { RuntimeError } from "../errors.js";
import { fsync, writeJsonDurably } from "./durable-file.js";
import type { FoundCheckpoint } from "./restore-set.js";
import { scanCheckpoints, type Scan } from "./checkpoint-scan.js";

export const SAVEPOINT_FORMAT = 1;
const MANIFEST = "savepoint.json";

/** One operator's file in a savepoint. */
export interface SavepointOperator {
  id: string;
  role: "engine" | "merge";
  /** Relative to the savepoint directory. */
  file: string;
  /** TM_EVENTS partitions it owned (a merge operator: all). */
  partitions: number[];
  /** A merge operator's merge partition. */
  mergePartition?: number;
}

export interface SavepointManifest {
  format: number;
  /** The restore epoch the roles restored from it are in. */
  epoch: number;
  /** e.g. "aligned checkpoint 12", "the final checkpoints of a clean stop". */
  cut: string;
  /** The aligned checkpoint n, or null for a clean stop's. */
  n: number | null;
  partitionCount: number;
  mergePartitions: number;
  /** Per TM_EVENTS partition: where its stage-1 partials stood at the cut (`cutPositions`). */
  cutTo: Record<string, number | null>;
  /** ISO time it was written. */
  createdAt: string;
  operators: SavepointOperator[];
}

/** A savepoint read from its directory: the manifest and its checkpoint files with their headers. */
export interface Savepoint {
  dir: string;
  manifest: SavepointManifest;
}

export async function readSavepoint(dir: string): Promise<Savepoint> {
  const at = resolve(dir);
  let text: string;
  try {
    text = await readFile(join(at, MANIFEST), "utf8");
  } catch {
    throw new RuntimeError(
      "TM_SAVEPOINT_INVALID",
      `--from-savepoint ${dir}: no ${MANIFEST} there, so it is not a tidemark savepoint; make one with tidemark savepoint --to DIR`,
    );
  }
  let m: Partial<SavepointManifest>;
  try {
    m = JSON.parse(text) as Partial<SavepointManifest>;
  } catch (err) {
    throw new RuntimeError(
      "TM_SAVEPOINT_INVALID",
      `--from-savepoint ${dir}: ${MANIFEST} is not JSON (${(err as Error).message})`,
    );
  }
  if (typeof m.format !== "number" || m.format > SAVEPOINT_FORMAT)
    throw new RuntimeError(
      "TM_SAVEPOINT_VERSION",
      `--from-savepoint ${dir}: savepoint format ${String(m.format)}, this tidemark reads formats 1 to ${SAVEPOINT_FORMAT}; ` +
        `restore it with the tidemark that wrote it or a newer one`,
    );
  const bad = ["epoch", "partitionCount", "mergePartitions"].find(
    (k) => !Number.isSafeInteger(m[k as keyof SavepointManifest]),
  );
  if (bad !== undefined || !Array.isArray(m.operators))
    throw new RuntimeError("TM_SAVEPOINT_INVALID", `--from-savepoint ${dir}: ${MANIFEST} lacks ${bad ?? "operators"}`);
  return { dir: at, manifest: m as SavepointManifest };
}

/** A savepoint's checkpoints with their headers (those its manifest lists), to restore from. */
export interface SavepointCheckpoints {
  /** e.g. "savepoint /x (aligned checkpoint 12)". */
  label: string;
  found: FoundCheckpoint[];
  unreadable: Scan["unreadable"];
}

export async function savepointCheckpoints(dir: string): Promise<SavepointCheckpoints> {
  const s = await readSavepoint(dir);
  const scan = await scanCheckpoints(s.dir);
  const listed = new Set(s.manifest.operators.map((o) => resolve(s.dir, o.file)));
  const found = scan.found.filter((f) => listed.has(resolve(f.file)));
  return { label: `savepoint ${s.dir} (${s.manifest.cut})`, found, unreadable: scan.unreadable };
}

/**
 * Writes a savepoint of `files` (one per operator) into `to`, which must not exist or be empty:
 * each file copied and fsynced, then the manifest written last and renamed into place, so a
 * directory with a manifest always holds every file it lists.
 */
export async function writeSavepoint(
  to: string,
  files: ReadonlyArray<{ found: FoundCheckpoint; role: "engine" | "merge"; mergePartition?: number }>,
  info: Omit<SavepointManifest, "format" | "createdAt" | "operators">,
): Promise<SavepointManifest> {
  const dir = resolve(to);
  if ((await readdir(dir).catch(() => [])).length > 0)
    throw new RuntimeError("TM_SAVEPOINT_INVALID", `--to ${to} is not empty: give a new directory for the savepoint`);
  const operators: SavepointOperator[] = [];
  for (const { found, role, mergePartition } of files) {
    const rel = join(found.operator, basename(found.file));
    await mkdir(join(dir, found.operator), { recursive: true });
    await copyFile(found.file, join(dir, rel));
    await fsync(join(dir, rel));
    operators.push({
      id: found.operator,
      role,
      file: rel,
      partitions: [...found.header.partitions],
      ...(mergePartition !== undefined ? { mergePartition } : {}),
    });
  }
  const manifest: SavepointManifest = {
    format: SAVEPOINT_FORMAT,
    ...info,
    createdAt: new Date().toISOString(),
    operators,
  };
  await writeJsonDurably(join(dir, MANIFEST), manifest);
  return manifest;
}

/**
 * Where each partition's stage-1 partials stood at a cut, from its workers' checkpoint headers: the
 * open tick's start (a part still behind: its own). A batch reporting past it was published after
 * the cut (restore-epoch.ts).
 */
export function cutPositions(headers: ReadonlyArray<FoundCheckpoint["header"]>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const h of headers) {
    if (h.merge !== undefined) continue;
    const behind = h.partials?.behind ?? [];
    for (const p of h.partitions) {
      const part = behind.find((b) => b.partitions.includes(p));
      out[String(p)] = part !== undefined ? part.from : (h.partials?.from ?? null);
    }
  }
  return out;
}
