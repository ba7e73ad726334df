import { describe, expect, it } from "vitest";
import { crc32 } from "./byte-codec.js";
import { Prng } from "./prng.js";

/** The textbook byte-at-a-time CRC-32 (IEEE, reflected, polynomial 0xEDB88320). */
function bytewise(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe("crc32", () => {
  it("gives the standard check values", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(new TextEncoder().encode("The quick brown fox jumps over the lazy dog"))).toBe(0x414fa339);
  });

  it("equals the bit-by-bit definition at every length and offset", () => {
    const rng = new Prng(3);
    const data = Uint8Array.from({ length: 600 }, () => rng.int(256));
    for (let n = 0; n < 70; n++)
      for (const off of [0, 1, 2, 3, 5]) {
        const part = data.subarray(off, off + n * 7);
        expect(crc32(part)).toBe(bytewise(part));
      }
  });
});
