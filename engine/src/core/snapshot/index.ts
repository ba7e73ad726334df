/**
 * core/snapshot — the core's state as bytes and back (docs/semantics.md, "Snapshot";
 * docs/decisions/0016-checkpoints-without-pause.md, docs/decisions/0023-fast-restore.md).
 *
 * Owns: the window core's snapshot codec (versioned, CRC-32 sealed), the shared pieces (partition
 * clocks, policy progress, delay samples, keys, points), the byte codec, and encoding in steps so
 * the runtime can spread a snapshot over event-loop turns; `useCrc32` lets the runtime hand it a native CRC-32.
 *
 * May import: protocol, every other folder of core/ (it writes their state). No I/O, no clock, no
 * env.
 *
 * Invariants: restore(snapshot(state)) continues exactly as state would have, pane for pane; a
 * snapshot of another version or with a bad CRC is refused with a coded CoreError, never half
 * read; a newer core reads the versions before it.
 */
export { ByteReader, ByteWriter, crc32, useCrc32, type Crc32Continue } from "./byte-codec.js";
export { decodeCoreSnapshot, encodeCoreSnapshot, SNAPSHOT_VERSION } from "./snapshot.js";
export { allSteps, snapshotStepsOf } from "./snapshot-steps.js";
export { base64, unbase64 } from "./base64.js";
