/**
 * The checkpoint file format (docs/operations.md, "Checkpoints"): a versioned header (offsets per
 * owned partition, the worker and its partitions) followed by the core snapshot, guarded by a
 * SHA-256 of everything before it.
 *
 *   "TMCK" | u32 version | u32 header length | header JSON | u32 snapshot length | snapshot | sha256
 *
 * Version 2 is the same layout with a header that carries `pending`: the pane and late batches of
 * input messages handled in part (emit-group.ts, docs/decisions/0012-batched-transport.md). It is
 * written only then, so that an engine reading version 1 alone refuses such a checkpoint rather
 * than lose those batches. Version 3 is the same again with a header that may carry the two-stage
 * dataflow's state (docs/decisions/0029-two-stage-dataflow.md): `partials`, the open tick of a
 * worker's stage-1 accumulator, or `merge`, a merge operator's place in TM_PARTIALS and its
 * aligner, `barrier`, the aligned checkpoint n it is, and `final`, written by a graceful stop;
 * written whenever one is there. Version 4 is the same again with a header that may carry `groups`,
 * a worker's core made of groups restored from another layout's checkpoints (its snapshot then a
 * group container), and `epoch`, the restore epoch a savepoint started
 * (docs/decisions/0057-elastic-workers.md). Every other checkpoint is version 1.
 */
import { createHash } from "node:crypto";
import { RuntimeError } from "../errors.js";
import type { MergeState } from "./merge-state.js";
import type { WorkerState } from "./worker-state.js";
import type { CoreGroup } from "../../core/grouped/index.js";

export const CHECKPOINT_VERSION = 1;
/** The version of a checkpoint whose header carries pending batches. */
export const CHECKPOINT_VERSION_PENDING = 2;
/** The version of a checkpoint whose header carries two-stage state (`partials` or `merge`). */
export const CHECKPOINT_VERSION_PARTIALS = 3;
/** The version of a checkpoint whose header carries `groups` or `epoch`. */
export const CHECKPOINT_VERSION_GROUPS = 4;
const READABLE = [
  CHECKPOINT_VERSION,
  CHECKPOINT_VERSION_PENDING,
  CHECKPOINT_VERSION_PARTIALS,
  CHECKPOINT_VERSION_GROUPS,
];
const MAGIC = 0x544d434b; // "TMCK"
const HASH_BYTES = 32;

export interface CheckpointHeader {
  worker: string;
  partitionCount: number;
  /** Owned partitions, in lane order. */
  partitions: number[];
  /** Resume point of each owned partition, in lane order (a merge operator's: none). */
  offsets: WorkerState["offsets"];
  /** Log time of the core at the snapshot (null before any input). */
  logTime: number | null;
  /** Wall clock when the snapshot was taken, ms. */
  wallTime: number;
  /** What was emitted for input messages handled in part, not yet published (version 2 only). */
  pending?: WorkerState["pending"];
  /** The stage-1 partial accumulator's open tick (version 3 only). */
  partials?: WorkerState["partials"];
  /** The aligned checkpoint this is (version 3 only; docs/decisions/0031-aligned-checkpoints.md). */
  barrier?: number;
  /** Written by a graceful stop (version 3 only): restored in preference to a completed aligned one (ADR 0031). */
  final?: true;
  /** A merge operator's state (version 3 only): the last TM_PARTIALS sequence handled and the aligner. */
  merge?: MergeState;
  /** A worker's core made of groups (version 4 only): what each group restores; its snapshot is their container. */
  groups?: CoreGroup[];
  /** The restore epoch (version 4 only; absent: 0): a start from a savepoint begins a new one, and older epochs are not restored. */
  epoch?: number;
}

export interface Checkpoint {
  header: CheckpointHeader;
  snapshot: Uint8Array;
}

/** The whole file in one buffer, hashed on the spot (tests, tooling; the store writes `encodeCheckpointParts`). */
export function encodeCheckpoint(cp: Checkpoint): Buffer {
  const head = prefixOf(cp);
  const hash = createHash("sha256").update(head).update(cp.snapshot).digest();
  return Buffer.concat([head, cp.snapshot, hash]);
}

/** Everything before the snapshot: magic, version, header length, header JSON, snapshot length. */
function prefixOf(cp: Checkpoint): Buffer {
  const header = Buffer.from(JSON.stringify(cp.header), "utf8");
  const prefix = Buffer.allocUnsafe(16 + header.length);
  let at = prefix.writeUInt32BE(MAGIC, 0);
  at = prefix.writeUInt32BE(versionOf(cp.header), at);
  at = prefix.writeUInt32BE(header.length, at);
  at += header.copy(prefix, at);
  prefix.writeUInt32BE(cp.snapshot.length, at);
  return prefix;
}

function versionOf(h: CheckpointHeader): number {
  if (h.groups !== undefined || (h.epoch ?? 0) > 0) return CHECKPOINT_VERSION_GROUPS;
  if (h.partials !== undefined || h.merge !== undefined || h.barrier !== undefined || h.final)
    return CHECKPOINT_VERSION_PARTIALS;
  return h.pending?.length ? CHECKPOINT_VERSION_PENDING : CHECKPOINT_VERSION;
}

/** Bytes hashed per step of `encodeCheckpointParts` (SHA-256 runs at a few hundred MB/s at least). */
const HASH_STEP_BYTES = 256 * 1024;

/**
 * The same bytes as `encodeCheckpoint`, as pieces to write one after the other (the prefix up to
 * the snapshot, the snapshot itself, the SHA-256), with nothing as large as the snapshot allocated
 * or copied: the hash is taken in 256 KiB steps, ~`sliceMs` of them per event-loop turn. A copy
 * into one 10 MB buffer, or Web Crypto's copy of its input, blocked the loop for tens of ms
 * (docs/decisions/0021-runtime-lean.md).
 */
export async function encodeCheckpointParts(cp: Checkpoint, sliceMs = 4): Promise<Uint8Array[]> {
  const prefix = prefixOf(cp);
  const hash = createHash("sha256").update(prefix);
  const snap = cp.snapshot;
  for (let from = 0; from < snap.length;) {
    const t0 = performance.now();
    do {
      hash.update(snap.subarray(from, from + HASH_STEP_BYTES));
      from += HASH_STEP_BYTES;
    } while (from < snap.length && performance.now() - t0 < sliceMs);
    if (from < snap.length) await new Promise((r) => setImmediate(r));
  }
  return [prefix, snap, hash.digest()];
}

/** Bytes before a header: magic, version, header length. */
export const HEADER_PREFIX_BYTES = 12;

/**
 * The header alone, from the file's first bytes (at least HEADER_PREFIX_BYTES; `headerBytes`
 * says how many more it needs), not verified: the restore step reads every operator's headers to
 * choose a cut, then decodes and verifies the files it chose.
 */
export function decodeCheckpointHeader(
  prefix: Uint8Array,
  name: string,
): { header: CheckpointHeader } | { need: number } {
  const buf = Buffer.from(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  const corrupt = (why: string): RuntimeError =>
    new RuntimeError("TM_CHECKPOINT_CORRUPT", `checkpoint ${name} is unusable: ${why}`);
  if (buf.length < HEADER_PREFIX_BYTES) throw corrupt(`only ${buf.length} bytes`);
  if (buf.readUInt32BE(0) !== MAGIC) throw corrupt("not a tidemark checkpoint (bad magic)");
  const version = buf.readUInt32BE(4);
  if (!READABLE.includes(version))
    throw corrupt(`version ${version}, this engine reads versions ${READABLE.join(", ")}`);
  const headerLen = buf.readUInt32BE(8);
  if (buf.length < HEADER_PREFIX_BYTES + headerLen) return { need: HEADER_PREFIX_BYTES + headerLen };
  try {
    return { header: JSON.parse(buf.toString("utf8", 12, 12 + headerLen)) as CheckpointHeader };
  } catch (err) {
    throw corrupt(`header is not JSON (${(err as Error).message})`);
  }
}

/** Decodes and verifies a checkpoint; throws TM_CHECKPOINT_CORRUPT saying what is wrong. */
export function decodeCheckpoint(bytes: Uint8Array, name: string): Checkpoint {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const corrupt = (why: string): RuntimeError =>
    new RuntimeError("TM_CHECKPOINT_CORRUPT", `checkpoint ${name} is unusable: ${why}`);
  if (buf.length < 16 + HASH_BYTES) throw corrupt(`only ${buf.length} bytes`);
  if (buf.readUInt32BE(0) !== MAGIC) throw corrupt("not a tidemark checkpoint (bad magic)");
  const end = buf.length - HASH_BYTES;
  const digest = createHash("sha256").update(buf.subarray(0, end)).digest();
  if (!digest.equals(buf.subarray(end))) throw corrupt("checksum mismatch (torn or altered file)");
  const version = buf.readUInt32BE(4);
  if (!READABLE.includes(version))
    throw corrupt(`version ${version}, this engine reads versions ${READABLE.join(", ")}`);
  const headerLen = buf.readUInt32BE(8);
  if (12 + headerLen + 4 > end) throw corrupt("header length out of range");
  const header = JSON.parse(buf.toString("utf8", 12, 12 + headerLen)) as CheckpointHeader;
  const snapLen = buf.readUInt32BE(12 + headerLen);
  const snapAt = 16 + headerLen;
  if (snapAt + snapLen !== end) throw corrupt("snapshot length out of range");
  return { header, snapshot: new Uint8Array(buf.subarray(snapAt, end)) };
}
