import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  denseAlloc,
  denseEmpty,
  denseHistogram,
  denseOfPacked,
  denseRaise,
  denseRaiseAll,
  histAt,
  histWidth,
  packedRegisters,
  registerAt,
  type DenseRegisters,
} from "./dense-registers.js";
import { HyperLogLog } from "./hyperloglog.js";

/** The codec's packing of plain registers (hyperloglog.ts encodes dense registers as this). */
function pack(regs: Uint8Array): Uint8Array {
  const out = new Uint8Array((regs.length * 3) / 4);
  for (let i = 0, j = 0; i < regs.length; i += 4, j += 3) {
    const v =
      (regs[i] as number) |
      ((regs[i + 1] as number) << 6) |
      ((regs[i + 2] as number) << 12) |
      ((regs[i + 3] as number) << 18);
    out[j] = v & 0xff;
    out[j + 1] = (v >>> 8) & 0xff;
    out[j + 2] = v >>> 16;
  }
  return out;
}

/** Byte equality without an element-wise diff of 48 KB arrays. */
function expectSameBytes(got: Uint8Array, want: Uint8Array): void {
  expect(got.length).toBe(want.length);
  expect(Buffer.from(got.buffer, got.byteOffset, got.length).equals(want)).toBe(true);
}

function histOf(regs: Uint8Array, p: number): number[] {
  const h = new Array<number>(55 - p).fill(0);
  for (const r of regs) h[r] = (h[r] as number) + 1;
  return h;
}

function histogram(d: DenseRegisters, p: number): number[] {
  return Array.from({ length: 55 - p }, (_, k) => histAt(d, p, k));
}

/** Raises (index, rank) pairs at precision p, ranks within 1 … 54 − p. */
const raises = (p: number) =>
  fc.array(fc.tuple(fc.integer({ min: 0, max: (1 << p) - 1 }), fc.integer({ min: 1, max: 54 - p })), {
    maxLength: 200,
  });

describe("dense registers: 6-bit registers and their histogram in one Uint8Array", () => {
  it("histogram counts take 2 bytes up to p = 15 (2^15 fits 16 bits) and 3 from p = 16 (2^16 does not)", () => {
    expect(histWidth(4)).toBe(2);
    expect(histWidth(15)).toBe(2);
    expect(histWidth(16)).toBe(3);
    expect(histWidth(18)).toBe(3);
    for (const p of [4, 10, 14, 15, 16, 18]) {
      const d = denseEmpty(p);
      expect(d.length).toBe((3 << (p - 2)) + histWidth(p) * (55 - p));
      expect(histAt(d, p, 0)).toBe(1 << p);
      expect(histogram(d, p).slice(1)).toEqual(new Array(54 - p).fill(0));
    }
  });

  it("at the width boundary (p = 15, 16) and beside it, raises keep registers, packing and histogram those of plain registers", () => {
    for (const p of [4, 10, 15, 16]) {
      fc.assert(
        fc.property(raises(p), (rs) => {
          const d = denseEmpty(p);
          const plain = new Uint8Array(1 << p);
          for (const [i, r] of rs) {
            denseRaise(d, p, i, r);
            if (r > (plain[i] as number)) plain[i] = r;
          }
          for (const [i] of rs) expect(registerAt(d, i)).toBe(plain[i]);
          expectSameBytes(packedRegisters(d, p), pack(plain));
          expect(histogram(d, p)).toEqual(histOf(plain, p));
          expect(Array.from(denseHistogram(d, p).subarray(0, 55 - p))).toEqual(histOf(plain, p));
        }),
        { numRuns: p >= 15 ? 20 : 100 },
      );
    }
  });

  it("a histogram count crosses its bytes' boundaries (255 → 256, 65 535 → 65 536 at p = 16) and comes back", () => {
    const p = 16;
    const d = denseEmpty(p);
    for (let i = 0; i < 300; i++) denseRaise(d, p, i, 1);
    expect(histAt(d, p, 1)).toBe(300);
    expect(histAt(d, p, 0)).toBe((1 << p) - 300);
    for (let i = 0; i < 300; i++) denseRaise(d, p, i, 2);
    expect(histAt(d, p, 1)).toBe(0);
    expect(histAt(d, p, 2)).toBe(300);
    expect(histAt(d, p, 0)).toBe((1 << p) - 300);
  });

  it("raiseAll is the register-wise max; denseOfPacked rebuilds the histogram and refuses a rank above the limit", () => {
    const p = 10;
    fc.assert(
      fc.property(raises(p), raises(p), (a, b) => {
        const x = denseEmpty(p);
        const y = denseEmpty(p);
        for (const [i, r] of a) denseRaise(x, p, i, r);
        for (const [i, r] of b) denseRaise(y, p, i, r);
        const want = new Uint8Array(1 << p);
        for (let i = 0; i < want.length; i++) want[i] = Math.max(registerAt(x, i), registerAt(y, i));
        denseRaiseAll(x, p, y);
        expectSameBytes(packedRegisters(x, p), pack(want));
        expect(histogram(x, p)).toEqual(histOf(want, p));
        const decoded = denseOfPacked(packedRegisters(x, p), p, 54 - p) as DenseRegisters;
        expectSameBytes(decoded, x);
      }),
      { numRuns: 100 },
    );
    const high = new Uint8Array(1 << p);
    high[7] = 54 - p + 1;
    expect(denseOfPacked(pack(high), p, 54 - p)).toBeNull();
    expect(denseAlloc(p).every((b) => b === 0)).toBe(true);
  });
});

describe("HyperLogLog dense form: one buffer per sketch, owned", () => {
  const dense = (p: number, n: number, prefix = "u") => {
    const h = new HyperLogLog({ precision: p });
    for (let i = 0; i < n; i++) h.add(`${prefix}${i}`);
    expect(h.isSparse).toBe(false);
    return h;
  };

  it("at p = 15 and 16 (the histogram's width switch) encode, decode, clone and merge agree", () => {
    for (const p of [15, 16]) {
      const a = dense(p, 9000, "a");
      const b = dense(p, 9000, "b");
      const d = HyperLogLog.decode(a.encode());
      expect(d.encode()).toEqual(a.encode());
      expect(d.estimate()).toBe(a.estimate());
      const m = a.clone();
      m.merge(b);
      const viaAdds = dense(p, 9000, "a");
      for (let i = 0; i < 9000; i++) viaAdds.add(`b${i}`);
      expect(m.encode()).toEqual(viaAdds.encode());
      expect(m.estimate()).toBe(viaAdds.estimate());
    }
  });

  it("a clone, a merge target and a decoded sketch hold buffers of their own", () => {
    const a = dense(10, 2000, "a");
    const before = a.encode();
    const c = a.clone();
    c.merge(dense(10, 2000, "b"));
    expect(a.encode()).toEqual(before);
    const bytes = a.encode();
    const d = HyperLogLog.decode(bytes);
    bytes.fill(0, 4);
    expect(d.encode()).toEqual(before);
    d.add("someone new 1");
    d.add("someone new 2");
    expect(a.encode()).toEqual(before);
  });
});
