/**
 * The snapshot of a grouped core (grouped-core.ts; docs/decisions/0057-elastic-workers.md): every
 * group's own snapshot, one after the other, each prefixed by its length.
 *
 *   "TMGC" | u32 version (1) | u32 groups | per group: u32 length | that group's snapshot
 *
 * Which partitions each group restores, and at which lane of its core, is in the checkpoint
 * header (`groups`), so the restore step picks a group's bytes without decoding the others.
 */
import { CoreError } from "../errors.js";
import { snapshotStepsOf } from "../snapshot/snapshot-steps.js";
import type { SnapshotSteps, StreamCore } from "../types.js";

const MAGIC = 0x544d4743; // "TMGC"
const VERSION = 1;

/** True when `bytes` is a grouped core's snapshot rather than one core's. */
export function isGroupContainer(bytes: Uint8Array): boolean {
  return bytes.length >= 12 && view(bytes).getUint32(0) === MAGIC;
}

/** The container of the groups' snapshots, in group order. */
export function encodeGroupContainer(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(12 + parts.reduce((n, p) => n + 4 + p.length, 0));
  const v = view(out);
  v.setUint32(0, MAGIC);
  v.setUint32(4, VERSION);
  v.setUint32(8, parts.length);
  let at = 12;
  for (const p of parts) {
    v.setUint32(at, p.length);
    out.set(p, at + 4);
    at += 4 + p.length;
  }
  return out;
}

/** The groups' snapshots (views into `bytes`); throws TM_SNAPSHOT_CORRUPT naming what is wrong. */
export function decodeGroupContainer(bytes: Uint8Array): Uint8Array[] {
  const bad = (why: string): CoreError => new CoreError("TM_SNAPSHOT_CORRUPT", `grouped snapshot: ${why}`);
  if (!isGroupContainer(bytes)) throw bad("no TMGC magic");
  const v = view(bytes);
  const version = v.getUint32(4);
  if (version !== VERSION) throw bad(`version ${version}, this engine reads version ${VERSION}`);
  const n = v.getUint32(8);
  const parts: Uint8Array[] = [];
  let at = 12;
  for (let i = 0; i < n; i++) {
    if (at + 4 > bytes.length) throw bad(`group ${i} starts past the end`);
    const len = v.getUint32(at);
    if (at + 4 + len > bytes.length) throw bad(`group ${i} runs past the end`);
    parts.push(bytes.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  if (at !== bytes.length) throw bad(`${bytes.length - at} bytes after the last group`);
  return parts;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** The container of `cores`' snapshots, each encoded in its own steps in turn (input held until the last). */
export function* containerSteps(cores: readonly StreamCore[]): SnapshotSteps {
  const parts: Uint8Array[] = [];
  for (const core of cores) {
    const steps = snapshotStepsOf(core);
    for (;;) {
      const r = steps.next();
      if (r.done) {
        parts.push(r.value);
        break;
      }
      yield;
    }
  }
  return encodeGroupContainer(parts);
}
