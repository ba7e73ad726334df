/**
 * Barrier-aligned checkpoints across both stages (docs/decisions/0031-aligned-checkpoints.md):
 * the coordinator's messages on TM_CHECKPOINTS and the barrier a worker puts on TM_PARTIALS.
 *
 *   tm.checkpoints.start          {n, startedAt}                 the coordinator starts checkpoint n
 *   tm.checkpoints.ack.<operator> {operator, n, file, ...}       an operator's checkpoint n is durable
 *   tm.checkpoints.complete       {n, operators, ...}            every operator acknowledged n
 *   tm.checkpoints.abort          {n, why}                       n given up (no progress for 60 s, or declined)
 *
 * and, on core NATS (not stored: a notice lost is the next one's), while an operator's checkpoint n
 * waits for its publishes to be acknowledged (docs/decisions/0035-backpressure.md):
 *
 *   tm.checkpoint-waiting.<operator> {operator, n, waitedMs}     n is cut here and waits for acks
 *
 * A barrier is a TM_PARTIALS message with header `Tm-Barrier: <n>` and a JSON body naming the
 * worker and its partitions: every partial batch the worker emitted before its checkpoint n is
 * before it in the stream, every later one after it.
 *
 * Pure: no node:* imports, no clock, no env.
 */

export const STREAM_CHECKPOINTS = "TM_CHECKPOINTS";
export const SUBJECT_CHECKPOINT_START = "tm.checkpoints.start";
export const SUBJECT_CHECKPOINT_COMPLETE = "tm.checkpoints.complete";
export const SUBJECT_CHECKPOINT_ABORT = "tm.checkpoints.abort";
/**
 * Core NATS request to the checkpoint coordinator (`tidemark savepoint`): start the next aligned
 * checkpoint now; the reply `{after}` is the newest n started before, so the first n completed
 * above it is a cut taken after the request (docs/decisions/0057-elastic-workers.md).
 */
export const SUBJECT_SAVEPOINT_REQUEST = "tm.savepoint.request";
export const BARRIER_HEADER = "Tm-Barrier";

export function checkpointAckSubject(operator: string): string {
  return `tm.checkpoints.ack.${operator}`;
}

/** Outside TM_CHECKPOINTS's `tm.checkpoints.>`: a notice of progress, not state. */
export function checkpointWaitingSubject(operator: string): string {
  return `tm.checkpoint-waiting.${operator}`;
}

/** An operator's checkpoint n is cut and waits for its publishes' acknowledgements (held by backpressure). */
export interface CheckpointWaiting {
  operator: string;
  n: number;
  /** Wall ms since its cut. */
  waitedMs: number;
}

export interface CheckpointStart {
  n: number;
  /** Coordinator's wall clock, ms. */
  startedAt: number;
}

export interface CheckpointAck {
  operator: string;
  n: number;
  /** The checkpoint file written for n. */
  file: string;
  /** Wall ms from the start notice to the operator's cut (Flink's checkpointStartDelay). */
  startDelayMs: number;
  /**
   * The work, ms, of the snapshot's slices while the operator held its input for n (its cut to its
   * snapshot's capture; the turns between slices not counted): the coordinator spaces checkpoints by
   * it so that holding stays a small share of the time (engine/src/runtime/checkpoint/checkpoint-spacing.ts).
   * Absent from older operators.
   */
  holdWorkMs?: number;
  /**
   * From a merge operator of merge partition ≥ 1 (docs/decisions/0033-merge-partitions.md): its
   * partition, the workers whose barrier n it aligned (each must acknowledge too) and its alignment time.
   */
  merge?: { partition: number; workers: string[]; alignmentMs: number };
}

export interface CheckpointComplete {
  n: number;
  startedAt: number;
  completedAt: number;
  /** Each operator's checkpoint file for n. */
  operators: Record<string, string>;
  /** Wall ms the merge operator waited from the first barrier n to the last (alignment). */
  alignmentMs: number;
}

export interface CheckpointAbort {
  n: number;
  why: string;
}

/** The body of a barrier message. */
export interface BarrierBody {
  worker: string;
  partitions: number[];
  n: number;
  /** The worker's restore epoch (absent: 0): a merge operator in a later epoch ignores it (docs/decisions/0057-elastic-workers.md). */
  epoch?: number;
}

/** A barrier's body, or null when `text` is not one (a malformed barrier merges nothing). */
export function parseBarrier(text: string, header: string): BarrierBody | null {
  let b: unknown;
  try {
    b = JSON.parse(text);
  } catch {
    return null;
  }
  const r = b as Partial<BarrierBody> | null;
  const n = Number(header);
  if (r === null || typeof r !== "object" || typeof r.worker !== "string" || !Array.isArray(r.partitions)) return null;
  if (!Number.isSafeInteger(n) || n < 1 || r.n !== n) return null;
  if (!r.partitions.every((p) => Number.isSafeInteger(p) && p >= 0)) return null;
  const epoch = r.epoch === undefined ? 0 : r.epoch;
  if (!Number.isSafeInteger(epoch) || epoch < 0) return null;
  return { worker: r.worker, partitions: r.partitions, n, ...(epoch > 0 ? { epoch } : {}) };
}
