/** A byte body sealed with its CRC-32 (little-endian, appended), as the core's snapshots are. */
import { ByteReader, crc32, type ByteWriter } from "../snapshot/byte-codec.js";
import { allSteps, crc32Steps, joinSteps } from "../snapshot/snapshot-steps.js";
import type { SNAPSHOT_CAPTURED } from "../types.js";

/** Steps that end with a body as pieces (their join is the body; joinSteps makes it). */
export type PieceSteps = Generator<void | typeof SNAPSHOT_CAPTURED, Uint8Array[], void>;
import { CoreError } from "../errors.js";

export function seal(w: ByteWriter): Uint8Array {
  return allSteps(sealSteps(w));
}

/** The same in steps: the checksum a piece at a time (docs/decisions/0016-checkpoints-without-pause.md). */
export function* sealSteps(w: ByteWriter): Generator<void, Uint8Array, void> {
  return yield* joinSteps(yield* sealPiecesSteps(w));
}

/** The same, left in pieces: for a body that goes into another one as it is (ByteWriter.adopt). */
export function* sealPiecesSteps(w: ByteWriter): Generator<void, Uint8Array[], void> {
  w.u32(yield* crc32Steps(w.chunks()));
  return w.chunks();
}

/** A reader over the body; throws TM_SNAPSHOT_CORRUPT (naming `what`) when short or the CRC fails. */
export function unseal(bytes: Uint8Array, what: string): ByteReader {
  if (bytes.length < 8)
    throw new CoreError("TM_SNAPSHOT_CORRUPT", `${what} is too short: restore from an older checkpoint`);
  const body = bytes.subarray(0, bytes.length - 4);
  if (new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(body.length, true) !== crc32(body))
    throw new CoreError("TM_SNAPSHOT_CORRUPT", `${what} fails its checksum: restore from an older checkpoint`);
  return new ByteReader(body);
}
