/**
 * Encoding a snapshot in steps (docs/decisions/0016-checkpoints-without-pause.md): the encoders are
 * generators that yield after each bounded piece of work, so a runtime can spread one snapshot over
 * several event-loop turns while it holds the input; `snapshot()` runs the same steps at once, so
 * both give the same bytes.
 */
import { CRC32_START, crc32Final, crc32Update } from "./byte-codec.js";
import type { SnapshotSteps, StreamCore } from "./types.js";

/** Bytes checksummed per step: about half a millisecond. */
const CRC_STEP = 256 * 1024;

/** Runs every step at once and returns what the last one returns. */
export function allSteps<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** CRC-32 of `bytes` (the value crc32 gives), a step per CRC_STEP bytes. */
export function* crc32Steps(bytes: Uint8Array): Generator<void, number, void> {
  let c = CRC32_START;
  for (let at = 0; at < bytes.length; at += CRC_STEP) {
    c = crc32Update(c, bytes, at, Math.min(bytes.length, at + CRC_STEP));
    yield;
  }
  return crc32Final(c);
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
