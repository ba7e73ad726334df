/**
 * Encoding a snapshot in steps (docs/decisions/0016-checkpoints-without-pause.md): the encoders are
 * generators that yield after each bounded piece of work, so a runtime can spread one snapshot over
 * several event-loop turns while it holds the input; `snapshot()` runs the same steps at once, so
 * both give the same bytes.
 */
import { CRC32_START, crc32Final, crc32Update, type ByteWriter } from "./byte-codec.js";
import type { SnapshotSteps, StreamCore } from "../types.js";

/** Bytes checksummed or copied per step: well under a millisecond. */
const BYTES_STEP = 256 * 1024;

/** Runs every step at once and returns what the last one returns. */
export function allSteps<T>(steps: Generator<unknown, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** CRC-32 of the pieces one after the other (the value crc32 gives their join), a step per BYTES_STEP. */
export function* crc32Steps(pieces: readonly Uint8Array[]): Generator<void, number, void> {
  let c = CRC32_START;
  for (const bytes of pieces)
    for (let at = 0; at < bytes.length; at += BYTES_STEP) {
      c = crc32Update(c, bytes, at, Math.min(bytes.length, at + BYTES_STEP));
      yield;
    }
  return crc32Final(c);
}

/** The pieces joined (the one piece itself when there is one), a step per BYTES_STEP copied. */
export function* joinSteps(pieces: readonly Uint8Array[]): Generator<void, Uint8Array, void> {
  if (pieces.length === 1) return pieces[0] as Uint8Array;
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let to = 0;
  for (const bytes of pieces)
    for (let at = 0; at < bytes.length; at += BYTES_STEP) {
      const part = bytes.subarray(at, Math.min(bytes.length, at + BYTES_STEP));
      out.set(part, to);
      to += part.length;
      yield;
    }
  return out;
}

/** w.bytes(b) (length, then the bytes), a step per BYTES_STEP copied. */
export function* writeBytesSteps(w: ByteWriter, b: Uint8Array): Generator<void, void, void> {
  w.uint(b.length);
  for (let at = 0; at < b.length; at += BYTES_STEP) {
    w.raw(b.subarray(at, Math.min(b.length, at + BYTES_STEP)));
    yield;
  }
}

/**
 * w.bytes() of the pieces joined (their total length, then each), the pieces adopted, not copied
 * (ByteWriter.adopt: the caller gives them up). The same bytes as writeBytesSteps of their join.
 */
export function adoptBytes(w: ByteWriter, pieces: readonly Uint8Array[]): void {
  w.uint(pieces.reduce((n, p) => n + p.length, 0));
  w.adopt(pieces);
}

/** w.raw(b) (the bytes alone), a step per BYTES_STEP copied. */
export function* writeRawSteps(w: ByteWriter, b: Uint8Array): Generator<void, void, void> {
  for (let at = 0; at < b.length; at += BYTES_STEP) {
    w.raw(b.subarray(at, Math.min(b.length, at + BYTES_STEP)));
    yield;
  }
}

/** A core's snapshot in steps: its own, or for a core without them `snapshot()` taken now, as one step. */
export function snapshotStepsOf(core: StreamCore): SnapshotSteps {
  if (core.snapshotSteps) return core.snapshotSteps();
  const bytes = core.snapshot();
  return (function* (): SnapshotSteps {
    yield;
    return bytes;
  })();
}
