import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  denseEmpty,
  denseHistogram,
  denseOfPacked,
  denseRaise,
  denseRaiseAll,
  histAt,
  histWidth,
  isWide,
  registerAt,
  writePacked,
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

/** The codec's bytes of a dense form. */
function packedOf(d: DenseRegisters, p: number): Uint8Array {
  const out = new Uint8Array(3 << (p - 2));
  writePacked(d, p, out, 0);
  return out;
}

function histOf(regs: Uint8Array, p: number): number[] {
  const h = new Array<number>(55 - p).fill(0);
  for (const r of regs) h[r] = (h[r] as number) + 1;
  return h;
}

function histogram(d: DenseRegisters, p: number): number[] {
  return Array.from({ length: 55 - p }, (_, k) => histAt(d, p, k));
}

/** Raises (index, rank) pairs at precision p, ranks within 1 … `top` (default 54 − p, the largest). */
const raises = (p: number, top = 54 - p) =>
  fc.array(fc.tuple(fc.integer({ min: 0, max: (1 << p) - 1 }), fc.integer({ min: 1, max: top })), {
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
      // 4-bit registers, then hist[0 … 15] only (no register of 4 bits holds more).
      expect(d.length).toBe((1 << (p - 1)) + histWidth(p) * 16);
      expect(isWide(d, p)).toBe(false);
      expect(histAt(d, p, 0)).toBe(1 << p);
      expect(histogram(d, p).slice(1)).toEqual(new Array(54 - p).fill(0));
    }
  });

  it("at the width boundary (p = 15, 16) and beside it, raises keep registers, packing and histogram those of plain registers", () => {
    for (const [p, top] of [
      [4, 50],
      [10, 15],
      [10, 44],
      [15, 16],
      [16, 15],
      [16, 38],
    ] as const) {
      fc.assert(
        fc.property(raises(p, top), (rs) => {
          let d = denseEmpty(p);
          const plain = new Uint8Array(1 << p);
          for (const [i, r] of rs) {
            d = denseRaise(d, p, i, r);
            if (r > (plain[i] as number)) plain[i] = r;
          }
          for (const [i] of rs) expect(registerAt(d, p, i)).toBe(plain[i]);
          expect(isWide(d, p)).toBe(plain.some((r) => r > 15));
          expectSameBytes(packedOf(d, p), pack(plain));
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
    for (let i = 0; i < 300; i++) expect(denseRaise(d, p, i, 1)).toBe(d);
    expect(histAt(d, p, 1)).toBe(300);
    expect(histAt(d, p, 0)).toBe((1 << p) - 300);
    for (let i = 0; i < 300; i++) denseRaise(d, p, i, 2);
    expect(isWide(d, p)).toBe(false);
    expect(histAt(d, p, 1)).toBe(0);
    expect(histAt(d, p, 2)).toBe(300);
    expect(histAt(d, p, 0)).toBe((1 << p) - 300);
  });

  it("a register passing 15 goes to the overflow (3 bytes, the whole histogram), the others and the histogram kept", () => {
    const p = 10;
    let d = denseEmpty(p);
    for (let i = 0; i < 1 << p; i++) d = denseRaise(d, p, i, 1 + (i % 15));
    expect(isWide(d, p)).toBe(false);
    const before = histogram(d, p);
    const wide = denseRaise(d, p, 3, 16);
    expect(wide).not.toBe(d);
    expect(isWide(wide, p)).toBe(true);
    expect(wide.length).toBe((1 << (p - 1)) + histWidth(p) * (55 - p) + 3);
    for (let i = 0; i < 1 << p; i++) expect(registerAt(wide, p, i)).toBe(i === 3 ? 16 : 1 + (i % 15));
    expect(histogram(wide, p)).toEqual(before.map((c, k) => c + (k === 16 ? 1 : k === 4 ? -1 : 0)));
    expect(denseRaise(wide, p, 3, 40)).toBe(wide);
    expect(registerAt(wide, p, 3)).toBe(40);
    // A second register above 15: 3 bytes more; one at 15 stays in its 4 bits.
    const two = denseRaise(wide, p, 1000, 17);
    expect(two.length).toBe(wide.length + 3);
    expect(denseRaise(two, p, 1001, 15)).toBe(two);
    expect([registerAt(two, p, 3), registerAt(two, p, 1000), registerAt(two, p, 1001)]).toEqual([40, 17, 15]);
  });

  it("raiseAll is the register-wise max in every pair of widths; denseOfPacked rebuilds form and histogram, refuses a rank above the limit", () => {
    const p = 10;
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), raises(p, 15), raises(p, 15), (wideX, wideY, a, b) => {
        let x = denseEmpty(p);
        let y = denseEmpty(p);
        for (const [i, r] of a) x = denseRaise(x, p, i, r);
        for (const [i, r] of b) y = denseRaise(y, p, i, r);
        if (wideX) x = denseRaise(x, p, 1000, 20);
        if (wideY) y = denseRaise(y, p, 1001, 30);
        expect(isWide(x, p)).toBe(wideX);
        expect(isWide(y, p)).toBe(wideY);
        const want = new Uint8Array(1 << p);
        for (let i = 0; i < want.length; i++) want[i] = Math.max(registerAt(x, p, i), registerAt(y, p, i));
        x = denseRaiseAll(x, p, y);
        expect(isWide(x, p)).toBe(wideX || wideY);
        expectSameBytes(packedOf(x, p), pack(want));
        expect(histogram(x, p)).toEqual(histOf(want, p));
        const decoded = denseOfPacked(packedOf(x, p), p, 54 - p) as DenseRegisters;
        expectSameBytes(decoded, x);
        expect(isWide(decoded, p)).toBe(wideX || wideY);
      }),
      { numRuns: 100 },
    );
    // Many registers above 15 on both sides (the overflow of each in its own order): the same registers.
    for (const q of [4, 10, 14])
      fc.assert(
        fc.property(raises(q), raises(q), (a, b) => {
          let x = denseEmpty(q);
          let y = denseEmpty(q);
          const want = new Uint8Array(1 << q);
          for (const [i, r] of a) {
            x = denseRaise(x, q, i, r);
            want[i] = Math.max(want[i] as number, r);
          }
          for (const [i, r] of b) {
            y = denseRaise(y, q, i, r);
            want[i] = Math.max(want[i] as number, r);
          }
          x = denseRaiseAll(x, q, y);
          for (let i = 0; i < want.length; i++) expect(registerAt(x, q, i)).toBe(want[i]);
          expectSameBytes(packedOf(x, q), pack(want));
          expect(histogram(x, q)).toEqual(histOf(want, q));
          const decoded = denseOfPacked(packedOf(x, q), q, 54 - q) as DenseRegisters;
          expect(decoded.length).toBe(x.length);
          expectSameBytes(packedOf(decoded, q), pack(want));
          expect(histogram(decoded, q)).toEqual(histOf(want, q));
        }),
        { numRuns: 50 },
      );
    const high = new Uint8Array(1 << p);
    high[7] = 54 - p + 1;
    expect(denseOfPacked(pack(high), p, 54 - p)).toBeNull();
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
