/**
 * A run of partial batches in one TM_PARTIALS message (docs/decisions/0054-partial-runs.md): a
 * worker whose serial chain to TM_PARTIALS has batches waiting behind the one in flight sends the
 * waiting ones together once it is acknowledged, so catching up costs one round trip per run
 * instead of one per 100 ms tick. Each batch in it is the very body (partial-batch.ts) it would
 * have been sent as alone, in chain order; a merge operator takes them one by one, as if they had
 * come as separate messages.
 *
 *   "TMPR" | u8 version | u32 count | count × (u32 length | "TMPB" batch body)
 *
 * Invariant: a run decodes only if every batch in it decodes and its bodies fill it exactly, so a
 * merge operator never merges part of a run.
 *
 * Pure: no node:* imports, no clock, no env.
 */
import { decodePartialBatch, PartialBatchError, type PartialBatch } from "./partial-batch.js";

export const PARTIAL_RUN_VERSION = 1;
const MAGIC = [0x54, 0x4d, 0x50, 0x52]; // "TMPR"
const PREFIX = 9;
/** Batches a run holds at most (6.4 s of log time at 100 ms ticks). */
export const MAX_RUN_BATCHES = 64;
/** Bytes a run's body holds at most, under nats-server's default max_payload (1 MiB). */
export const MAX_RUN_BYTES = 512 * 1024;

/** Batch bodies (encodePartialBatch's) in chain order, as one run's body. */
export function encodePartialRun(bodies: readonly Uint8Array[]): Uint8Array {
  let size = PREFIX;
  for (const b of bodies) size += 4 + b.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  out[4] = PARTIAL_RUN_VERSION;
  view.setUint32(5, bodies.length);
  let at = PREFIX;
  for (const b of bodies) {
    view.setUint32(at, b.length);
    out.set(b, at + 4);
    at += 4 + b.length;
  }
  return out;
}

/** True when `body` starts as a run's does (its batches are then read with decodePartialMessage). */
export function isPartialRun(body: Uint8Array): boolean {
  return body.length >= 4 && MAGIC.every((m, i) => body[i] === m);
}

/**
 * The batches of one TM_PARTIALS message body, a run's or a single batch's, in chain order; throws
 * PartialBatchError naming the field (`run…` for a run's framing, `run[i].…` inside its batch i).
 */
export function decodePartialMessage(body: Uint8Array): PartialBatch[] {
  if (!isPartialRun(body)) return [decodePartialBatch(body)];
  if (body.length < PREFIX) throw new PartialBatchError("run", "ends inside its header");
  if (body[4] !== PARTIAL_RUN_VERSION)
    throw new PartialBatchError("run.version", `${body[4]} is not ${PARTIAL_RUN_VERSION}: upgrade the merge operator`);
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const n = view.getUint32(5);
  if (n === 0 || n > MAX_RUN_BATCHES) throw new PartialBatchError("run.count", `${n} is not 1-${MAX_RUN_BATCHES}`);
  const batches: PartialBatch[] = [];
  let at = PREFIX;
  for (let i = 0; i < n; i++) {
    if (at + 4 > body.length) throw new PartialBatchError(`run[${i}]`, "runs past the end of the body");
    const length = view.getUint32(at);
    if (at + 4 + length > body.length) throw new PartialBatchError(`run[${i}].length`, "runs past the end of the body");
    try {
      batches.push(decodePartialBatch(body.subarray(at + 4, at + 4 + length)));
    } catch (err) {
      if (err instanceof PartialBatchError) throw new PartialBatchError(`run[${i}].${err.field}`, err.why);
      throw err;
    }
    at += 4 + length;
  }
  if (at !== body.length) throw new PartialBatchError("run", `leaves ${body.length - at} bytes unread`);
  return batches;
}
