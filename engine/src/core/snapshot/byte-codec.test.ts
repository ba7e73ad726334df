import * as zlib from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { ByteReader, ByteWriter, crc32, CRC32_START, crc32Final, crc32Update, useCrc32 } from "./byte-codec.js";
import { Prng } from "../prng.js";

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

describe("crc32 handed node:zlib's (useCrc32)", () => {
  afterEach(() => useCrc32(null));

  /** The running value after feeding `data` in pieces cut at `cuts`. */
  const inPieces = (data: Uint8Array, cuts: number[]): number => {
    let c = CRC32_START;
    let from = 0;
    for (const to of [...cuts, data.length]) {
      c = crc32Update(c, data, from, to);
      from = to;
    }
    return crc32Final(c);
  };

  it("gives the tables' value whole and in pieces, and the tables again once taken back", () => {
    const rng = new Prng(11);
    const data = Uint8Array.from({ length: 5000 }, () => rng.int(256));
    const cases = Array.from({ length: 40 }, () => {
      const cuts = Array.from({ length: rng.int(6) }, () => rng.int(data.length)).sort((a, b) => a - b);
      return { part: data.subarray(rng.int(9), rng.int(data.length)), cuts };
    });
    const tables = cases.map((k) => [crc32(k.part), inPieces(data, k.cuts)]);
    let calls = 0;
    useCrc32((bytes, previous) => (calls++, zlib.crc32(bytes, previous)));
    expect(cases.map((k) => [crc32(k.part), inPieces(data, k.cuts)])).toEqual(tables);
    expect(calls).toBeGreaterThan(40);
    // node:zlib as an oracle the tables did not write: the same values.
    expect(cases.map((k) => zlib.crc32(k.part))).toEqual(tables.map(([whole]) => whole));
    useCrc32(null);
    calls = 0;
    expect(cases.map((k) => [crc32(k.part), inPieces(data, k.cuts)])).toEqual(tables);
    expect(calls).toBe(0);
  });
});

describe("ByteWriter past one chunk", () => {
  it("reads back what it wrote across chunk boundaries, joined at once or by the pieces", () => {
    const rng = new Prng(8);
    type Op = ["uint", number] | ["f64", number] | ["string", string] | ["bytes", Uint8Array] | ["u32", number];
    const ops: Op[] = [];
    const w = new ByteWriter();
    let size = 0;
    while (size < 3_500_000) {
      const k = rng.int(5);
      if (k === 0) ops.push(["uint", rng.int(2 ** 30) * rng.int(1000)]);
      else if (k === 1) ops.push(["f64", rng.next() * 1e6 - 5e5]);
      else if (k === 2) ops.push(["string", rng.int(4) === 0 ? `dienst-é-${rng.int(99)}` : `/route/${rng.int(1e6)}`]);
      else if (k === 3)
        ops.push(["bytes", Uint8Array.from({ length: rng.int(3) === 0 ? 70_000 : 40 }, () => rng.int(256))]);
      else ops.push(["u32", rng.int(2 ** 32)]);
      const op = ops.at(-1) as Op;
      if (op[0] === "bytes" && rng.int(2) === 0) w.bytesOf(op[1], op[1].length);
      else if (op[0] === "bytes") w.bytes(op[1]);
      else if (op[0] === "string") w.string(op[1]);
      else w[op[0]](op[1]);
      size += op[0] === "bytes" ? op[1].length : 8;
    }
    const pieces = w.chunks();
    expect(pieces.length).toBeGreaterThan(2);
    const joined = Buffer.concat(pieces);
    const whole = w.view();
    expect(Buffer.from(whole).equals(joined)).toBe(true);
    const r = new ByteReader(whole);
    for (const op of ops) {
      if (op[0] === "u32") {
        const at = r.pos;
        r.pos += 4;
        expect(new DataView(whole.buffer, whole.byteOffset).getUint32(at, true)).toBe(op[1]);
      } else if (op[0] === "bytes") expect(Buffer.from(r.bytes()).equals(Buffer.from(op[1]))).toBe(true);
      else expect(r[op[0]]()).toBe(op[1]);
    }
    expect(r.done).toBe(true);
  });
});

describe("ByteWriter.adopt", () => {
  it("gives the bytes raw() copies would, keeps the pieces as they are and writes on after them", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rng = new Prng(seed);
      const copied = new ByteWriter();
      const adopted = new ByteWriter();
      const given: { piece: Uint8Array; before: Buffer }[] = [];
      for (let step = 0; step < 60; step++) {
        const k = rng.int(4);
        if (k === 0) {
          const v = rng.int(2 ** 30) * rng.int(1000);
          copied.uint(v);
          adopted.uint(v);
        } else if (k === 1) {
          const s = `/route/${rng.int(1e6)}`;
          copied.string(s);
          adopted.string(s);
        } else {
          // Empty, small, or past a chunk (1 MiB); sometimes a view into a larger buffer.
          const sizes = [0, 1 + rng.int(50), 1 + rng.int(5000), (1 << 20) + rng.int(70_000)];
          const pieces = Array.from({ length: 1 + rng.int(3) }, () => {
            const n = sizes[rng.int(rng.int(8) === 0 ? 4 : 3)] as number;
            const backing = new Uint8Array(n + 16);
            const salt = rng.int(256);
            for (let i = 0; i < backing.length; i++) backing[i] = (i * 31 + salt) & 255;
            return rng.int(2) === 0 ? backing.subarray(0, n) : backing.subarray(16);
          });
          for (const p of pieces) copied.raw(p);
          adopted.adopt(pieces);
          for (const piece of pieces) given.push({ piece, before: Buffer.from(piece) });
        }
      }
      expect(Buffer.concat(adopted.chunks()).equals(Buffer.concat(copied.chunks()))).toBe(true);
      const chunks = new Set(adopted.chunks());
      for (const { piece, before } of given) {
        if (piece.length > 0) expect(chunks.has(piece)).toBe(true);
        expect(Buffer.from(piece).equals(before)).toBe(true);
      }
    }
  });
});
