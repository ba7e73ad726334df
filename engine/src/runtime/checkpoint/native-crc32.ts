/**
 * Snapshot checksums by node:zlib (docs/decisions/0052-native-crc32.md): every snapshot the core
 * seals or restores carries a CRC-32 over all its bytes, which the core computes with tables in
 * JS (~0.55 GB/s here); node:zlib's crc32 gives the same value ~6× faster. Both roles turn it on
 * as they start (role-start.ts), and the benchmarks that time checkpoints and restores do too.
 */
import * as zlib from "node:zlib";
import { useCrc32 } from "../../core/snapshot/index.js";

/** True when node:zlib has crc32 (Node ≥ 20.15) and the core now uses it; else the core keeps its tables. */
export function useNativeCrc32(): boolean {
  const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (typeof crc32 !== "function") return false;
  useCrc32((bytes, previous) => crc32(bytes, previous));
  return true;
}
