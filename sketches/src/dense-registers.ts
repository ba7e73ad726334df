/**
 * The dense form of a HyperLogLog, in one Uint8Array (one typed array's headers, no wrapper
 * object; docs/decisions/0025-light-sketches.md, 0049-compact-state.md):
 * - the 2^p registers, 4 bits each (register i in the low or high half of byte i/2);
 * - then the histogram of the register values, kept up to date on every change — all Ertl's
 *   estimator reads, so an estimate costs O(64), not O(2^p): hist[k] = registers holding k, for
 *   k = 0 … 15 while every register is ≤ 15, else k = 0 … q + 1 (q = 53 − p), little-endian,
 *   2 bytes each while 2^p ≤ 65 535 (p ≤ 15), else 3 (2^18 < 2^24). Derived state: never
 *   encoded, rebuilt on decode;
 * - then, once a register passes 15 (odds 2^−15 per user at p = 10), the overflow: 3 bytes per
 *   register above 15, little-endian `index | value << 18`, its 4 bits holding 15. Which form a
 *   buffer holds follows from its length. Registers are the same in either form; the codec packs
 *   them 6 bits each (writePacked).
 * Functions that may grow the buffer return the buffer to keep. A buffer of the 4-bit form comes
 * from byte-slab.ts (a view into a shared chunk: one typed array's headers, no buffer of its own).
 */
import { slabBytes, slabCopy } from "./byte-slab.js";

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

/** Byte offset of the overflow (past hist[0 … 54 − p]) once a register passed 15. */
function overflowStart(p: number): number {
  return (1 << (p - 1)) + histWidth(p) * (55 - p);
}

/** True once a register passed 15 (the buffer holds the overflow), false while all are ≤ 15. */
export function isWide(d: DenseRegisters, p: number): boolean {
  return d.length !== narrowBytes(p);
}

/** Bytes of the registers themselves: 4 bits each and 3 per overflow entry (the histogram is derived, not counted). */
export function denseDataBytes(d: DenseRegisters, p: number): number {
  return histStart(p) + (isWide(d, p) ? d.length - overflowStart(p) : 0);
}

/** Byte offset of the histogram: the registers' length. */
function histStart(p: number): number {
  return 1 << (p - 1);
}

/** All registers 0 (4 bits each; hist[0] = 2^p). */
export function denseEmpty(p: number): DenseRegisters {
  const d = slabBytes(narrowBytes(p));
  histAdd(d, p, 0, 1 << p);
  return d;
}

/** Byte offset of register i's overflow entry, or -1 when it has none. */
function overflowOf(d: DenseRegisters, p: number, i: number): number {
  for (let o = overflowStart(p); o < d.length; o += 3)
    if (((d[o] as number) | ((d[o + 1] as number) << 8) | (((d[o + 2] as number) & 3) << 16)) === i) return o;
  return -1;
}

/** Register i. */
export function registerAt(d: DenseRegisters, p: number, i: number): number {
  const nib = ((d[i >>> 1] as number) >>> ((i & 1) << 2)) & 15;
  if (nib !== NARROW_MAX || d.length === narrowBytes(p)) return nib;
  const o = overflowOf(d, p, i);
  return o < 0 ? nib : (d[o + 2] as number) >>> 2;
}

/** Register idx := max(register idx, rank); returns the buffer (a new one when it grew). */
export function denseRaise(d: DenseRegisters, p: number, idx: number, rank: number): DenseRegisters {
  const b = idx >>> 1;
  const shift = (idx & 1) << 2;
  const byte = d[b] as number;
  const nib = (byte >>> shift) & 15;
  if (rank <= nib) return d;
  if (nib === NARROW_MAX) {
    // rank > 15: the register is 15 or in the overflow.
    const o = d.length === narrowBytes(p) ? -1 : overflowOf(d, p, idx);
    if (o < 0) return addOverflow(d, p, idx, NARROW_MAX, rank);
    const cur = (d[o + 2] as number) >>> 2;
    if (rank <= cur) return d;
    d[o + 2] = ((d[o + 2] as number) & 3) | (rank << 2);
    histMove(d, histStart(p), histWidth(p), cur, rank);
    return d;
  }
  if (rank <= NARROW_MAX) {
    d[b] = (byte & ~(15 << shift)) | (rank << shift);
    histMove(d, histStart(p), histWidth(p), nib, rank);
    return d;
  }
  d[b] = byte | (NARROW_MAX << shift);
  return addOverflow(d, p, idx, nib, rank);
}

/** A buffer 3 bytes longer (the first time: with the whole histogram) holding idx's entry; hist[from]−−, hist[rank]++. */
function addOverflow(d: DenseRegisters, p: number, idx: number, from: number, rank: number): DenseRegisters {
  const at = d.length === narrowBytes(p) ? overflowStart(p) : d.length;
  const grown = new Uint8Array(at + 3);
  grown.set(d);
  const v = idx | (rank << 18);
  grown[at] = v & 0xff;
  grown[at + 1] = (v >>> 8) & 0xff;
  grown[at + 2] = v >>> 16;
  histMove(grown, histStart(p), histWidth(p), from, rank);
  return grown;
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

/** hist[k] (0 past 15 while every register is ≤ 15). */
export function histAt(d: DenseRegisters, p: number, k: number): number {
  if (k > NARROW_MAX && !isWide(d, p)) return 0;
  const w = histWidth(p);
  const o = histStart(p) + w * k;
  const lo = (d[o] as number) | ((d[o + 1] as number) << 8);
  return w === 2 ? lo : lo | ((d[o + 2] as number) << 16);
}

/** hist[k] += delta (the result stays within 0 … 2^p). */
function histAdd(d: DenseRegisters, p: number, k: number, delta: number): void {
  const w = histWidth(p);
  countAdd(d, histStart(p) + w * k, w, delta);
}

/** Scratch histogram of denseHistogram and denseOfPacked (valid until the next call). */
const HIST = new Float64Array(64);

/** The histogram as numbers, hist[0 … 54 − p] (a shared scratch array, valid until the next call). */
export function denseHistogram(d: DenseRegisters, p: number): Float64Array {
  for (let k = 0; k <= 54 - p; k++) HIST[k] = histAt(d, p, k);
  return HIST;
}

/** Writes the codec's 3·2^p/4 bytes of packed registers (6 bits each) into `out` at `at`. */
export function writePacked(d: DenseRegisters, p: number, out: Uint8Array, at: number): void {
  const n = 3 << (p - 2);
  for (let b = 0, j = at; j < at + n; b += 2, j += 3) {
    const lo = d[b] as number;
    const hi = d[b + 1] as number;
    const v = (lo & 15) | ((lo >>> 4) << 6) | ((hi & 15) << 12) | ((hi >>> 4) << 18);
    out[j] = v & 0xff;
    out[j + 1] = (v >>> 8) & 0xff;
    out[j + 2] = v >>> 16;
  }
  // Registers above 15: their 6 bits replace the 15 their 4 bits hold.
  for (let o = overflowStart(p); o < d.length; o += 3) {
    const e = (d[o] as number) | ((d[o + 1] as number) << 8) | ((d[o + 2] as number) << 16);
    const i = e & 0x3ffff;
    const j = at + (i >>> 2) * 3;
    const bit = 6 * (i & 3);
    const g = (out[j] as number) | ((out[j + 1] as number) << 8) | ((out[j + 2] as number) << 16);
    const v = (g & ~(63 << bit)) | ((e >>> 18) << bit);
    out[j] = v & 0xff;
    out[j + 1] = (v >>> 8) & 0xff;
    out[j + 2] = v >>> 16;
  }
}

/** Register-wise max with another sketch's registers of the same precision; returns the buffer to keep. */
export function denseRaiseAll(d: DenseRegisters, p: number, src: DenseRegisters): DenseRegisters {
  const m = 1 << p;
  // The 4 bits first, two registers at a time, skipping equal bytes (a register in src's overflow
  // is raised to 15 here, to its value below).
  for (let b = 0; b < m >>> 1; b++) {
    const theirs = src[b] as number;
    const mine = d[b] as number;
    if (theirs === mine || theirs === 0) continue;
    if ((theirs & 15) > (mine & 15)) d = denseRaise(d, p, 2 * b, theirs & 15);
    if (theirs >>> 4 > mine >>> 4) d = denseRaise(d, p, 2 * b + 1, theirs >>> 4);
  }
  for (let o = overflowStart(p); o < src.length; o += 3) {
    const e = (src[o] as number) | ((src[o + 1] as number) << 8) | ((src[o + 2] as number) << 16);
    d = denseRaise(d, p, e & 0x3ffff, e >>> 18);
  }
  return d;
}

/**
 * The dense form of `packed` (the codec's 3·2^p/4 bytes, 6 bits a register; copied), its
 * histogram counted, registers above 15 in the overflow. Null when a register is above `maxRank`
 * (corrupt input).
 */
export function denseOfPacked(packed: Uint8Array, p: number, maxRank: number): DenseRegisters | null {
  const n = 3 << (p - 2);
  let d = slabBytes(narrowBytes(p));
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
    d[b] = Math.min(r0, 15) | (Math.min(r1, 15) << 4);
    d[b + 1] = Math.min(r2, 15) | (Math.min(r3, 15) << 4);
  }
  for (let r = maxRank + 1; r < 64; r++) if (counts[r] !== 0) return null;
  // A register above 15 sets bit 4 or 5 of its 6: then its entry goes to the overflow.
  const wide = (max & 0b110000_110000_110000_110000) !== 0;
  if (wide) {
    let k = 0;
    for (let r = NARROW_MAX + 1; r <= maxRank; r++) k += counts[r] as number;
    const grown = new Uint8Array(overflowStart(p) + 3 * k);
    grown.set(d);
    let o = overflowStart(p);
    for (let i = 0; i < 1 << p; i++) {
      const j = (i >>> 2) * 3;
      const g = (packed[j] as number) | ((packed[j + 1] as number) << 8) | ((packed[j + 2] as number) << 16);
      const r = (g >>> (6 * (i & 3))) & 63;
      if (r <= NARROW_MAX) continue;
      const e = i | (r << 18);
      grown[o] = e & 0xff;
      grown[o + 1] = (e >>> 8) & 0xff;
      grown[o + 2] = e >>> 16;
      o += 3;
    }
    d = grown;
  }
  for (let k = 0; k <= (wide ? maxRank : NARROW_MAX); k++) histAdd(d, p, k, counts[k] as number);
  return d;
}

/** A copy (registers, histogram and overflow), its buffer from the slab (byte-slab.ts) as a new one's. */
export function denseCopy(d: DenseRegisters): DenseRegisters {
  return slabCopy(d);
}

/** Bytes held: the buffer and its typed array's headers (one JSTypedArray in a shared chunk, byte-slab.ts). */
export function denseHeapBytes(d: DenseRegisters): number {
  return (d.byteLength === d.buffer.byteLength ? 180 : 96) + d.length;
}
