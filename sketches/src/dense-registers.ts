/**
 * The dense form of a HyperLogLog, in one Uint8Array (one typed array's headers, no wrapper
 * object; docs/decisions/0025-light-sketches.md):
 * - bytes [0, 3·2^p/4): the 2^p registers packed 6 bits each, four to three bytes little-endian
 *   (register 4g + j at bits 6j … 6j + 5 of bytes 3g … 3g + 2) — the layout the codec writes, so
 *   encoding is a copy;
 * - then the histogram of the register values, kept up to date on every change — all Ertl's
 *   estimator reads, so an estimate costs O(64), not O(2^p): hist[k] = registers holding k, for
 *   k = 0 … q + 1 (q = 53 − p), little-endian, 2 bytes each while 2^p ≤ 65 535 (p ≤ 15), else 3
 *   (2^18 < 2^24). Derived state: never encoded, rebuilt on decode.
 */
export type DenseRegisters = Uint8Array;

/** Bytes of one histogram count at precision p. */
export function histWidth(p: number): number {
  return p <= 15 ? 2 : 3;
}

/** Byte offset of the histogram: the packed registers' length. */
function histStart(p: number): number {
  return 3 << (p - 2);
}

/** All registers 0 (hist[0] = 2^p). */
export function denseEmpty(p: number): DenseRegisters {
  const d = denseAlloc(p);
  histAdd(d, p, 0, 1 << p);
  return d;
}

/** Registers and histogram all zero (a decoder fills both). */
export function denseAlloc(p: number): DenseRegisters {
  return new Uint8Array(histStart(p) + histWidth(p) * (55 - p));
}

/** The packed registers (a view: the codec's bytes). */
export function packedRegisters(d: DenseRegisters, p: number): Uint8Array {
  return d.subarray(0, histStart(p));
}

/** Register i. Its 16-bit word never runs past the buffer: the histogram follows the last group. */
export function registerAt(d: DenseRegisters, i: number): number {
  const bit = 6 * (i & 3);
  const b = (i >>> 2) * 3 + (bit >>> 3);
  return (((d[b] as number) | ((d[b + 1] as number) << 8)) >>> (bit & 7)) & 63;
}

/** Register idx := max(register idx, rank). */
export function denseRaise(d: DenseRegisters, p: number, idx: number, rank: number): void {
  const bit = 6 * (idx & 3);
  const b = (idx >>> 2) * 3 + (bit >>> 3);
  const shift = bit & 7;
  const word = (d[b] as number) | ((d[b + 1] as number) << 8);
  const cur = (word >>> shift) & 63;
  if (rank <= cur) return;
  const next = (word & ~(63 << shift)) | (rank << shift);
  d[b] = next;
  d[b + 1] = next >>> 8;
  histAdd(d, p, cur, -1);
  histAdd(d, p, rank, 1);
}

/** hist[k]. */
export function histAt(d: DenseRegisters, p: number, k: number): number {
  const w = histWidth(p);
  const o = histStart(p) + w * k;
  const lo = (d[o] as number) | ((d[o + 1] as number) << 8);
  return w === 2 ? lo : lo | ((d[o + 2] as number) << 16);
}

/** hist[k] += delta (the result stays within 0 … 2^p). */
export function histAdd(d: DenseRegisters, p: number, k: number, delta: number): void {
  const w = histWidth(p);
  const o = histStart(p) + w * k;
  let v = (d[o] as number) | ((d[o + 1] as number) << 8);
  if (w === 3) v |= (d[o + 2] as number) << 16;
  v += delta;
  d[o] = v;
  d[o + 1] = v >>> 8;
  if (w === 3) d[o + 2] = v >>> 16;
}

/** Scratch histogram of denseHistogram (valid until the next call). */
const HIST = new Float64Array(64);

/** The histogram as numbers, hist[0 … 54 − p] (a shared scratch array, valid until the next call). */
export function denseHistogram(d: DenseRegisters, p: number): Float64Array {
  for (let k = 0; k <= 54 - p; k++) HIST[k] = histAt(d, p, k);
  return HIST;
}

/** Register-wise max with another sketch's registers of the same precision, four registers at a time. */
export function denseRaiseAll(d: DenseRegisters, p: number, src: DenseRegisters): void {
  const end = histStart(p);
  for (let b = 0, i = 0; b < end; b += 3, i += 4) {
    const theirs = (src[b] as number) | ((src[b + 1] as number) << 8) | ((src[b + 2] as number) << 16);
    if (theirs === 0) continue;
    const mine = (d[b] as number) | ((d[b + 1] as number) << 8) | ((d[b + 2] as number) << 16);
    if (mine === theirs) continue;
    for (let j = 0; j < 4; j++) {
      const r = (theirs >>> (6 * j)) & 63;
      if (r > ((mine >>> (6 * j)) & 63)) denseRaise(d, p, i + j, r);
    }
  }
}

/**
 * Copies `packed` (the codec's 3·2^p/4 bytes) into a new dense form and counts its histogram;
 * returns null when a register is above `maxRank` (corrupt input).
 */
export function denseOfPacked(packed: Uint8Array, p: number, maxRank: number): DenseRegisters | null {
  const d = denseAlloc(p);
  d.set(packed);
  // Registers are 6-bit (≤ 63): count them into 64 slots, then check none is above maxRank.
  const counts = HIST;
  counts.fill(0);
  const end = histStart(p);
  for (let j = 0; j < end; j += 3) {
    const v = (packed[j] as number) | ((packed[j + 1] as number) << 8) | ((packed[j + 2] as number) << 16);
    const a = v & 63;
    const b = (v >>> 6) & 63;
    const c = (v >>> 12) & 63;
    const e = v >>> 18;
    counts[a] = (counts[a] as number) + 1;
    counts[b] = (counts[b] as number) + 1;
    counts[c] = (counts[c] as number) + 1;
    counts[e] = (counts[e] as number) + 1;
  }
  for (let r = maxRank + 1; r < 64; r++) if (counts[r] !== 0) return null;
  for (let k = 0; k <= maxRank; k++) histAdd(d, p, k, counts[k] as number);
  return d;
}

/** Bytes held: the buffer and one typed array's headers. */
export function denseHeapBytes(d: DenseRegisters): number {
  return 180 + d.length;
}
