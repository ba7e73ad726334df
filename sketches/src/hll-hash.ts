/**
 * A fast 64-bit string hash for HyperLogLog: MurmurHash3-style mixing of two 32-bit lanes over
 * the string's UTF-16 code units (two per block, no UTF-8 encoding step), finalized like
 * MurmurHash3_x86_128. The result is the top 53 bits of the 64 as a non-negative integer number
 * (exact in a double, no allocation, storable): hi 32 bits · 2^21 + the top 21 bits of lo.
 */
const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
const C3 = 0x85ebca6b;
const C4 = 0xc2b2ae35;
const SEED1 = 0x9747b28c;
const SEED2 = 0x3c6ef372;
export const HASH_LO_BITS = 21;
export const HASH_LO_SCALE = 2 ** HASH_LO_BITS;

export function hash53(value: string): number {
  const len = value.length;
  let h1 = SEED1 ^ len;
  let h2 = SEED2 ^ len;
  const even = len & ~1;
  for (let i = 0; i < even; i += 2) {
    const k = value.charCodeAt(i) | (value.charCodeAt(i + 1) << 16);
    let k1 = Math.imul(k, C1);
    k1 = Math.imul((k1 << 15) | (k1 >>> 17), C2);
    h1 ^= k1;
    h1 = Math.imul((h1 << 13) | (h1 >>> 19), 5) + 0xe6546b64;
    let k2 = Math.imul(k, C3);
    k2 = Math.imul((k2 << 17) | (k2 >>> 15), C4);
    h2 ^= k2;
    h2 = Math.imul((h2 << 19) | (h2 >>> 13), 5) + 0x561ccd1b;
  }
  if (even !== len) {
    const k = value.charCodeAt(even);
    let k1 = Math.imul(k, C1);
    h1 ^= Math.imul((k1 << 15) | (k1 >>> 17), C2);
    k1 = Math.imul(k, C3);
    h2 ^= Math.imul((k1 << 17) | (k1 >>> 15), C4);
  }
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  h1 = fmix32(h1);
  h2 = fmix32(h2);
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  return (h1 >>> 0) * HASH_LO_SCALE + (h2 >>> (32 - HASH_LO_BITS));
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
