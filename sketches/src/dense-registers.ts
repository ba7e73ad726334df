/**
 * The dense form of a HyperLogLog, in one Uint8Array (one typed array's headers, no wrapper
 * object; docs/decisions/0025-light-sketches.md):
 * - the 2^p registers, 4 bits each (register i in the low or high half of byte i/2) while every
 *   one is ≤ 15, then — the first time a register outgrows that, as a bin count widens in
 *   bin-store.ts — 6 bits each, packed as the codec writes them (four to three bytes, register
 *   4g + j at bits 6j … 6j + 5 of bytes 3g … 3g + 2, little-endian). Which one a buffer holds
 *   follows from its length. At p = 10 a register passes 15 with odds 2^−15 per user;
 * - then the histogram of the register values, kept up to date on every change — all Ertl's
 *   estimator reads, so an estimate costs O(64), not O(2^p): hist[k] = registers holding k, for
 *   k = 0 … q + 1 (q = 53 − p; while the registers are 4 bits, k = 0 … 15 only), little-endian,
 *   2 bytes each while 2^p ≤ 65 535 (p ≤ 15), else 3 (2^18 < 2^24). Derived state: never
 *   encoded, rebuilt on decode.
 * Functions that may widen return the buffer to keep.
 */
export type DenseRegisters = Uint8Array;

/** Largest register a 4-bit buffer holds. */
const NARROW_MAX = 15;

/** Bytes of one histogram count at precision p. */
export function histWidth(p: number): number {
  return p <= 15 ? 2 : 3;
}

/** Length of a 4-bit buffer: the registers, then hist[0 … 15]. */
function narrowBytes(p: number): number {
  return (1 << (p - 1)) + (NARROW_MAX + 1) * histWidth(p);
}

/** Length of a 6-bit buffer: the packed registers, then hist[0 … 54 − p]. */
function wideBytes(p: number): number {
  return (3 << (p - 2)) + histWidth(p) * (55 - p);
}

/** True when the registers are 6 bits each (the codec's packing), false while 4. */
export function isWide(d: DenseRegisters, p: number): boolean {
  return d.length !== narrowBytes(p);
}

/** Byte offset of the histogram: the registers' length. */
function histStart(d: DenseRegisters, p: number): number {
  return isWide(d, p) ? 3 << (p - 2) : 1 << (p - 1);
}

/** All registers 0 (4 bits each; hist[0] = 2^p). */
export function denseEmpty(p: number): DenseRegisters {
  const d = new Uint8Array(narrowBytes(p));
  histAdd(d, p, 0, 1 << p);
  return d;
}

/** Register i. A 6-bit register's 16-bit word never runs past the buffer: the histogram follows. */
export function registerAt(d: DenseRegisters, p: number, i: number): number {
  if (!isWide(d, p)) return ((d[i >>> 1] as number) >>> ((i & 1) << 2)) & 15;
  const bit = 6 * (i & 3);
  const b = (i >>> 2) * 3 + (bit >>> 3);
  return (((d[b] as number) | ((d[b + 1] as number) << 8)) >>> (bit & 7)) & 63;
}

/** Register idx := max(register idx, rank); returns the buffer (a new one when it widened). */
export function denseRaise(d: DenseRegisters, p: number, idx: number, rank: number): DenseRegisters {
  if (d.length === narrowBytes(p)) {
    const hist = 1 << (p - 1);
    const b = idx >>> 1;
    const shift = (idx & 1) << 2;
    const byte = d[b] as number;
    const cur = (byte >>> shift) & 15;
    if (rank <= cur) return d;
    if (rank > NARROW_MAX) return denseRaise(widen(d, p), p, idx, rank);
    d[b] = (byte & ~(15 << shift)) | (rank << shift);
    histMove(d, hist, histWidth(p), cur, rank);
    return d;
  }
  const bit = 6 * (idx & 3);
  const b = (idx >>> 2) * 3 + (bit >>> 3);
  const shift = bit & 7;
  const word = (d[b] as number) | ((d[b + 1] as number) << 8);
  const cur = (word >>> shift) & 63;
  if (rank <= cur) return d;
  const next = (word & ~(63 << shift)) | (rank << shift);
  d[b] = next;
  d[b + 1] = next >>> 8;
  histMove(d, 3 << (p - 2), histWidth(p), cur, rank);
  return d;
}

/** One register moved from value `from` to `to`: hist[from]−−, hist[to]++. */
function histMove(d: DenseRegisters, start: number, w: number, from: number, to: number): void {
  countAdd(d, start + w * from, w, -1);
  countAdd(d, start + w * to, w, 1);
}

function countAdd(d: DenseRegisters, o: number, w: number, delta: number): void {
  let v = (d[o] as number) | ((d[o + 1] as number) << 8);
  if (w === 3) v |= (d[o + 2] as number) << 16;
  v += delta;
  d[o] = v;
  d[o + 1] = v >>> 8;
  if (w === 3) d[o + 2] = v >>> 16;
}

/** hist[k] (0 past 15 while the registers are 4 bits). */
export function histAt(d: DenseRegisters, p: number, k: number): number {
  if (k > NARROW_MAX && !isWide(d, p)) return 0;
  const w = histWidth(p);
  const o = histStart(d, p) + w * k;
  const lo = (d[o] as number) | ((d[o + 1] as number) << 8);
  return w === 2 ? lo : lo | ((d[o + 2] as number) << 16);
}

/** hist[k] += delta (the result stays within 0 … 2^p). */
function histAdd(d: DenseRegisters, p: number, k: number, delta: number): void {
  const w = histWidth(p);
  countAdd(d, histStart(d, p) + w * k, w, delta);
}

/** Scratch histogram of denseHistogram and denseOfPacked (valid until the next call). */
const HIST = new Float64Array(64);

/** The histogram as numbers, hist[0 … 54 − p] (a shared scratch array, valid until the next call). */
export function denseHistogram(d: DenseRegisters, p: number): Float64Array {
  for (let k = 0; k <= 54 - p; k++) HIST[k] = histAt(d, p, k);
  return HIST;
}

/** The same registers and histogram, 6 bits a register. */
function widen(d: DenseRegisters, p: number): DenseRegisters {
  const m = 1 << p;
  const wide = new Uint8Array(wideBytes(p));
  writePacked(d, p, wide, 0);
  wide.set(d.subarray(m >>> 1), 3 << (p - 2));
  return wide;
}

/** Writes the codec's 3·2^p/4 bytes of packed registers into `out` at `at`. */
export function writePacked(d: DenseRegisters, p: number, out: Uint8Array, at: number): void {
  const n = 3 << (p - 2);
  if (isWide(d, p)) {
    out.set(d.subarray(0, n), at);
    return;
  }
  for (let b = 0, j = at; j < at + n; b += 2, j += 3) {
    const lo = d[b] as number;
    const hi = d[b + 1] as number;
    const v = (lo & 15) | ((lo >>> 4) << 6) | ((hi & 15) << 12) | ((hi >>> 4) << 18);
    out[j] = v & 0xff;
    out[j + 1] = (v >>> 8) & 0xff;
    out[j + 2] = v >>> 16;
  }
}

/** Register-wise max with another sketch's registers of the same precision; returns the buffer to keep. */
export function denseRaiseAll(d: DenseRegisters, p: number, src: DenseRegisters): DenseRegisters {
  const m = 1 << p;
  if (!isWide(src, p) && !isWide(d, p)) {
    // Both 4 bits a register: two at a time, skipping equal bytes.
    for (let b = 0; b < m >>> 1; b++) {
      const theirs = src[b] as number;
      const mine = d[b] as number;
      if (theirs === mine || theirs === 0) continue;
      if ((theirs & 15) > (mine & 15)) d = denseRaise(d, p, 2 * b, theirs & 15);
      if (theirs >>> 4 > mine >>> 4) d = denseRaise(d, p, 2 * b + 1, theirs >>> 4);
    }
    return d;
  }
  if (isWide(src, p) && isWide(d, p)) {
    // Both 6 bits a register: four at a time (three bytes), skipping equal groups.
    for (let b = 0, i = 0; i < m; b += 3, i += 4) {
      const theirs = (src[b] as number) | ((src[b + 1] as number) << 8) | ((src[b + 2] as number) << 16);
      const mine = (d[b] as number) | ((d[b + 1] as number) << 8) | ((d[b + 2] as number) << 16);
      if (theirs === mine || theirs === 0) continue;
      for (let j = 0; j < 4; j++) {
        const r = (theirs >>> (6 * j)) & 63;
        if (r > ((mine >>> (6 * j)) & 63)) denseRaise(d, p, i + j, r);
      }
    }
    return d;
  }
  for (let i = 0; i < m; i++) {
    const r = registerAt(src, p, i);
    if (r !== 0) d = denseRaise(d, p, i, r);
  }
  return d;
}

/**
 * The dense form of `packed` (the codec's 3·2^p/4 bytes; copied), its histogram counted: 4 bits
 * a register when all are ≤ 15, else 6. Null when a register is above `maxRank` (corrupt input).
 */
export function denseOfPacked(packed: Uint8Array, p: number, maxRank: number): DenseRegisters | null {
  const n = 3 << (p - 2);
  let d = new Uint8Array(narrowBytes(p));
  // Registers are 6-bit (≤ 63): count them into 64 slots, then check none is above maxRank.
  const counts = HIST;
  counts.fill(0);
  let max = 0;
  for (let j = 0, b = 0; j < n; j += 3, b += 2) {
    const v = (packed[j] as number) | ((packed[j + 1] as number) << 8) | ((packed[j + 2] as number) << 16);
    const r0 = v & 63;
    const r1 = (v >>> 6) & 63;
    const r2 = (v >>> 12) & 63;
    const r3 = v >>> 18;
    counts[r0] = (counts[r0] as number) + 1;
    counts[r1] = (counts[r1] as number) + 1;
    counts[r2] = (counts[r2] as number) + 1;
    counts[r3] = (counts[r3] as number) + 1;
    max |= v;
    d[b] = r0 | (r1 << 4);
    d[b + 1] = r2 | (r3 << 4);
  }
  for (let r = maxRank + 1; r < 64; r++) if (counts[r] !== 0) return null;
  // A register above 15 sets bit 4 or 5 of its 6: then the buffer is the packed bytes themselves.
  const wide = (max & 0b110000_110000_110000_110000) !== 0;
  if (wide) {
    d = new Uint8Array(wideBytes(p));
    d.set(packed.subarray(0, n));
  }
  for (let k = 0; k <= (wide ? maxRank : NARROW_MAX); k++) histAdd(d, p, k, counts[k] as number);
  return d;
}

/** Bytes held: the buffer and one typed array's headers. */
export function denseHeapBytes(d: DenseRegisters): number {
  return 180 + d.length;
}
