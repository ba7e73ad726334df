/**
 * Which checkpoints a worker restores its partitions from, whichever workers wrote them
 * (docs/decisions/0057-elastic-workers.md; docs/operations.md, "Rescaling"). Invariant: the state of
 * every partition a worker owns comes from one consistent cut, or the worker refuses to start; a
 * partition with no checkpoint anywhere starts fresh. In order:
 *
 * 1. the same layout: this operator's own files hold the newest state of exactly its partitions —
 *    the store's own choice (final, else its file of the completed aligned checkpoint, else newest);
 * 2. a clean stop: the newest checkpoint of every partition was written by a graceful stop (`final`);
 * 3. an aligned checkpoint n: the files of one barrier n cover every partition (the completed n
 *    first, then the newest n that covers them) — only when every role restores that cut (a
 *    savepoint, `aligned`): what the old workers emitted after it must be rolled back in the merge
 *    stage too, so a worker alone refuses it (TM_CHECKPOINT_ROLLBACK, saying how to make one);
 * 4. else TM_CHECKPOINT_UNCOVERED, naming the partitions and what to do — never a silent replay.
 *
 * Before all: a checkpoint of this restore epoch written for another partition count is refused
 * (TM_PARTITION_COUNT_CHANGED): the partition count is the maximum parallelism.
 *
 * Pure: the headers are read by the caller (checkpoint-scan.ts).
 */
import { formatPartitionList } from "../input/partition-list.js";
import { RuntimeError } from "../errors.js";
import type { CheckpointHeader } from "./checkpoint-codec.js";

/** A checkpoint file found in a data directory or a savepoint, with its header (not yet verified). */
export interface FoundCheckpoint {
  /** The operator directory it is in (the writer's id). */
  operator: string;
  file: string;
  header: CheckpointHeader;
}

export interface RestoreWant {
  operator: string;
  /** Owned partitions, in lane order. */
  partitions: readonly number[];
  partitionCount: number;
  /** The restore epoch whose checkpoints count (undefined: any, a savepoint's). */
  epoch?: number;
  /** The completed aligned checkpoint n the coordinator announced, if any. */
  completed?: number;
  /** Every role restores the same cut (a savepoint): an aligned checkpoint of another layout may be taken. */
  aligned?: boolean;
}

/** The cut chosen: `same` leaves the choice to the operator's own store (as before rescaling existed). */
export type RestoreSet =
  { kind: "fresh" } | { kind: "same" } | { kind: "cut"; cut: string; files: Assigned[]; fresh: number[] };

/** A file of the cut and the partitions restored from it (a file may hold newer state elsewhere for others). */
export interface Assigned {
  found: FoundCheckpoint;
  partitions: number[];
}

export function chooseRestoreSet(found: readonly FoundCheckpoint[], want: RestoreWant): RestoreSet {
  const workers = found.filter(
    (f) => f.header.merge === undefined && (want.epoch === undefined || (f.header.epoch ?? 0) === want.epoch),
  );
  const other = workers.find((f) => f.header.partitionCount !== want.partitionCount);
  if (other) throw partitionCountChanged(other, want.partitionCount);
  const relevant = workers.filter((f) => f.header.partitions.some((p) => want.partitions.includes(p)));
  if (relevant.length === 0) return { kind: "fresh" };
  const newest = new Map<number, FoundCheckpoint>();
  for (const p of want.partitions) {
    const best = newestFor(relevant, p);
    if (best) newest.set(p, best);
  }
  const covered = want.partitions.filter((p) => newest.has(p));
  const fresh = want.partitions.filter((p) => !newest.has(p));
  if (isSameLayout(want, covered, newest)) return { kind: "same" };
  if (covered.every((p) => newest.get(p)?.header.final === true))
    return {
      kind: "cut",
      cut: "the final checkpoints of a clean stop",
      files: assign(covered, (p) => newest.get(p)),
      fresh,
    };
  const aligned = alignedCut(relevant, covered, want.completed);
  if (aligned && want.aligned === true)
    return { kind: "cut", cut: `aligned checkpoint ${aligned.n}`, files: aligned.files, fresh };
  if (aligned) throw rollback(aligned, covered);
  throw uncovered(relevant, covered, want);
}

/** The position a file resumes partition p at: its stream sequence, then events of a message handled in part. */
export function positionOf(f: FoundCheckpoint, p: number): [number, number] {
  const o = f.header.offsets[f.header.partitions.indexOf(p)];
  return o === undefined ? [-1, 0] : [o.lastSeq, o.partialCount];
}

function newer(a: FoundCheckpoint, b: FoundCheckpoint, p: number): boolean {
  const [sa, ca] = positionOf(a, p);
  const [sb, cb] = positionOf(b, p);
  return sa !== sb ? sa > sb : ca !== cb ? ca > cb : a.header.wallTime > b.header.wallTime;
}

function newestFor(files: readonly FoundCheckpoint[], p: number): FoundCheckpoint | undefined {
  let best: FoundCheckpoint | undefined;
  for (const f of files) if (f.header.partitions.includes(p) && (best === undefined || newer(f, best, p))) best = f;
  return best;
}

/** This operator's own files hold the newest state of each of its partitions, written for exactly them. */
function isSameLayout(
  want: RestoreWant,
  covered: readonly number[],
  newest: ReadonlyMap<number, FoundCheckpoint>,
): boolean {
  if (covered.length !== want.partitions.length) return false;
  return covered.every((p) => {
    const f = newest.get(p) as FoundCheckpoint;
    return f.operator === want.operator && f.header.partitions.join(",") === want.partitions.join(",");
  });
}

function alignedCut(
  files: readonly FoundCheckpoint[],
  covered: readonly number[],
  completed: number | undefined,
): { n: number; files: Assigned[] } | null {
  const ns = [...new Set(files.flatMap((f) => (f.header.barrier === undefined ? [] : [f.header.barrier])))].sort(
    (a, b) => b - a,
  );
  const order =
    completed !== undefined && ns.includes(completed) ? [completed, ...ns.filter((n) => n !== completed)] : ns;
  for (const n of order) {
    const atN = files.filter((f) => f.header.barrier === n);
    if (covered.every((p) => newestFor(atN, p) !== undefined))
      return { n, files: assign(covered, (p) => newestFor(atN, p)) };
  }
  return null;
}

/** Each partition's file, grouped by file in the order first met. */
function assign(partitions: readonly number[], fileOf: (p: number) => FoundCheckpoint | undefined): Assigned[] {
  const out = new Map<FoundCheckpoint, number[]>();
  for (const p of partitions) {
    const f = fileOf(p) as FoundCheckpoint;
    const list = out.get(f);
    if (list === undefined) out.set(f, [p]);
    else list.push(p);
  }
  return [...out].map(([found, ps]) => ({ found, partitions: ps }));
}

function partitionCountChanged(f: FoundCheckpoint, count: number): RuntimeError {
  return new RuntimeError(
    "TM_PARTITION_COUNT_CHANGED",
    `checkpoint ${f.file} was written with partitionCount ${f.header.partitionCount}, but this engine runs with ${count}: ` +
      `the partition count is the maximum parallelism and fixed for a data directory's state; ` +
      `start with partitionCount ${f.header.partitionCount} again, or use a fresh --data directory (and backfill the log)`,
  );
}

function rollback(cut: { n: number; files: Assigned[] }, covered: readonly number[]): RuntimeError {
  const writers = [...new Set(cut.files.map((a) => a.found.operator))].join(", ");
  return new RuntimeError(
    "TM_CHECKPOINT_ROLLBACK",
    `the newest consistent state of partitions [${formatPartitionList(covered)}] is aligned checkpoint ${cut.n}, written by ${writers}; ` +
      `what they emitted after it must be rolled back in every role, the merge stage included: ` +
      `with no role running, make a savepoint of it (tidemark savepoint --offline --data DIR --to SAVEPOINT) ` +
      `and start every role with --from-savepoint SAVEPOINT (tidemark up --workers N does both by itself), ` +
      `or start the previous workers again and stop them with SIGTERM`,
  );
}

function uncovered(files: readonly FoundCheckpoint[], covered: readonly number[], want: RestoreWant): RuntimeError {
  const ns = [...new Set(files.flatMap((f) => (f.header.barrier === undefined ? [] : [f.header.barrier])))].sort(
    (a, b) => b - a,
  );
  const n = ns[0];
  const missing =
    n === undefined
      ? covered
      : covered.filter((p) => !files.some((f) => f.header.barrier === n && f.header.partitions.includes(p)));
  const newestFinal = covered.filter((p) => newestFor(files, p)?.header.final !== true);
  const aligned =
    n === undefined
      ? "no aligned checkpoint"
      : `aligned checkpoint ${n} lacks partitions [${formatPartitionList(missing)}]`;
  return new RuntimeError(
    "TM_CHECKPOINT_UNCOVERED",
    `no consistent cut covers partitions [${formatPartitionList(want.partitions)}] of worker ${want.operator}: ` +
      `${aligned}, and partitions [${formatPartitionList(newestFinal)}] were not stopped cleanly (their newest checkpoint is not final); ` +
      `start the previous workers again and stop them with SIGTERM (a clean stop writes final checkpoints), ` +
      `or start every role from a savepoint (--from-savepoint DIR), or use a fresh --data directory`,
  );
}
