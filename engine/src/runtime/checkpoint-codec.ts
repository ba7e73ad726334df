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
 * than lose those batches; every other checkpoint is version 1.
 */
import { createHash, webcrypto } from "node:crypto";
import type { EmitGroupState } from "./emit-group.js";
import { RuntimeError } from "./errors.js";
import type { LaneOffset } from "./partition-merge.js";

export const CHECKPOINT_VERSION = 1;
/** The version of a checkpoint whose header carries pending batches. */
export const CHECKPOINT_VERSION_PENDING = 2;
const MAGIC = 0x544d434b; // "TMCK"
const HASH_BYTES = 32;

export interface CheckpointHeader {
  worker: string;
  partitionCount: number;
  /** Owned partitions, in lane order. */
  partitions: number[];
  /** Resume point of each owned partition, in lane order. */
  offsets: LaneOffset[];
  /** Log time of the core at the snapshot (null before any input). */
  logTime: number | null;
  /** Wall clock when the snapshot was taken, ms. */
  wallTime: number;
  /** What was emitted for input messages handled in part, not yet published (version 2 only). */
  pending?: EmitGroupState[];
}

export interface Checkpoint {
  header: CheckpointHeader;
  snapshot: Uint8Array;
}

export function encodeCheckpoint(cp: Checkpoint): Buffer {
  const { body, at } = layout(cp);
  createHash("sha256").update(body.subarray(0, at)).digest().copy(body, at);
  return body;
}

/**
 * The same bytes with the SHA-256 taken off the event loop (Web Crypto hashes on the thread pool):
 * hashing a 10 MB checkpoint would otherwise block it for tens of ms
 * (docs/decisions/0016-checkpoints-without-pause.md).
 */
export async function encodeCheckpointOffLoop(cp: Checkpoint): Promise<Buffer> {
  const { body, at } = layout(cp);
  body.set(new Uint8Array(await webcrypto.subtle.digest("SHA-256", body.subarray(0, at))), at);
  return body;
}

/** Everything but the hash, written; `at` is where the hash goes. */
function layout(cp: Checkpoint): { body: Buffer; at: number } {
  const header = Buffer.from(JSON.stringify(cp.header), "utf8");
  const body = Buffer.allocUnsafe(12 + header.length + 4 + cp.snapshot.length + HASH_BYTES);
  let at = 0;
  at = body.writeUInt32BE(MAGIC, at);
  at = body.writeUInt32BE(cp.header.pending?.length ? CHECKPOINT_VERSION_PENDING : CHECKPOINT_VERSION, at);
  at = body.writeUInt32BE(header.length, at);
  at += header.copy(body, at);
  at = body.writeUInt32BE(cp.snapshot.length, at);
  body.set(cp.snapshot, at);
  at += cp.snapshot.length;
  return { body, at };
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
  if (version !== CHECKPOINT_VERSION && version !== CHECKPOINT_VERSION_PENDING)
    throw corrupt(
      `version ${version}, this engine reads versions ${CHECKPOINT_VERSION} and ${CHECKPOINT_VERSION_PENDING}`,
    );
  const headerLen = buf.readUInt32BE(8);
  if (12 + headerLen + 4 > end) throw corrupt("header length out of range");
  const header = JSON.parse(buf.toString("utf8", 12, 12 + headerLen)) as CheckpointHeader;
  const snapLen = buf.readUInt32BE(12 + headerLen);
  const snapAt = 16 + headerLen;
  if (snapAt + snapLen !== end) throw corrupt("snapshot length out of range");
  return { header, snapshot: new Uint8Array(buf.subarray(snapAt, end)) };
}
