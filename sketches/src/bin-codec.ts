import { MAX_BINS, type BinStore } from "./bin-store.js";
import type { ByteReader } from "./byte-reader.js";
import type { ByteWriter } from "./byte-writer.js";
import { corrupt } from "./errors.js";

/** Keys of positive doubles at α ≥ 1e-4 stay within ±4·10^6. */
export const KEY_LIMIT = 2 ** 23;

/**
 * Bins as runs of consecutive non-zero keys: the number of runs, then per run the gap from the
 * previous run (the first: its zigzag start key), its length − 1 and its counts, all varints.
 * Zero bins inside a run cost nothing; lognormal latencies come out near 1 byte per bin.
 */
export function encodeBins(store: BinStore, w: ByteWriter): void {
  const runs: number[] = [];
  for (let k = store.minKey; k <= store.maxKey; k++) {
    if (store.countAt(k) === 0) continue;
    const start = k;
    while (k < store.maxKey && store.countAt(k + 1) !== 0) k++;
    runs.push(start, k);
  }
  w.varint(runs.length / 2);
  for (let r = 0; r < runs.length; r += 2) {
    const start = runs[r] as number;
    const end = runs[r + 1] as number;
    if (r === 0) w.zigzag(start);
    else w.varint(start - (runs[r - 1] as number) - 2);
    w.varint(end - start);
    for (let k = start; k <= end; k++) w.varint(store.countAt(k));
  }
}

/** Reads runs into an empty store; rejects out-of-range keys, spans wider than MAX_BINS, zero counts. */
export function decodeBins(r: ByteReader, store: BinStore): void {
  const runCount = r.varint();
  let first = 0;
  let prevEnd = 0;
  for (let i = 0; i < runCount; i++) {
    const start = i === 0 ? r.zigzag() : prevEnd + 2 + r.varint();
    if (i === 0) first = start;
    const end = start + r.varint();
    if (start < -KEY_LIMIT || end > KEY_LIMIT || end - first >= MAX_BINS)
      throw corrupt("DDSketch bins (key out of range)");
    for (let k = start; k <= end; k++) {
      const c = r.varint();
      if (c === 0) throw corrupt("DDSketch bins (zero count in a run)");
      store.addKey(k, c);
    }
    prevEnd = end;
  }
}
