import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SketchError } from "./errors.js";
import { ertlEstimate } from "./hll-estimator.js";
import { HyperLogLog } from "./hyperloglog.js";

function filled(n: number, prefix = "user-", precision = 14): HyperLogLog {
  const h = new HyperLogLog({ precision });
  for (let i = 0; i < n; i++) h.add(`${prefix}${i}`);
  return h;
}

const relErr = (est: number, n: number) => Math.abs(est - n) / n;

describe("HyperLogLog accuracy", () => {
  it("a decoded sparse table answers, encodes and weighs as the one inserts built, and takes adds on alike", () => {
    for (const n of [17, 48, 49, 96, 200, 1500]) {
      const h = new HyperLogLog({ precision: 14 });
      for (let i = 0; i < n; i++) h.add(`user-${i}`);
      const d = HyperLogLog.decode(h.encode());
      expect(d.estimate()).toBe(h.estimate());
      expect(d.heapBytes()).toBe(h.heapBytes());
      expect(d.encode()).toEqual(h.encode());
      for (let i = 0; i < 300; i++) {
        h.add(`more-${i}`);
        d.add(`more-${i}`);
      }
      expect(d.encode()).toEqual(h.encode());
    }
  });

  const p = 14;
  const threeSigma = (3 * 1.04) / Math.sqrt(2 ** p);

  it.each([1_000, 5_000, 20_000, 100_000, 1_000_000])("%i distinct: within 3 standard errors", (n) => {
    const h = filled(n, `acc${n}-`);
    expect(relErr(h.estimate(), n)).toBeLessThanOrEqual(threeSigma);
  });

  it("stays within 3 standard errors across many seeds at 10^4 (no systematic bias)", () => {
    let sumSigned = 0;
    const runs = 20;
    for (let s = 0; s < runs; s++) {
      const est = filled(10_000, `seed${s}-`).estimate();
      expect(relErr(est, 10_000)).toBeLessThanOrEqual(threeSigma);
      sumSigned += (est - 10_000) / 10_000;
    }
    // Mean of 20 estimates has standard error 0.81%/√20 ≈ 0.18%: a 1% mean bias would be a bug.
    expect(Math.abs(sumSigned / runs)).toBeLessThan(0.01);
  });

  it.each([1, 10, 100, 500, 999])("%i distinct (sparse): within 1%", (n) => {
    const h = filled(n, `sp${n}-`);
    expect(h.isSparse).toBe(true);
    expect(relErr(h.estimate(), n)).toBeLessThanOrEqual(0.01);
  });

  it("counts duplicates once, in sparse and dense mode", () => {
    const h = filled(300);
    for (let i = 0; i < 300; i++) h.add(`user-${i}`);
    expect(relErr(h.estimate(), 300)).toBeLessThanOrEqual(0.01);
    const d = filled(50_000);
    const before = d.estimate();
    for (let i = 0; i < 50_000; i++) d.add(`user-${i}`);
    expect(d.estimate()).toBe(before);
  });

  it("turns dense beyond the sparse capacity and keeps the estimate continuous", () => {
    const h = new HyperLogLog();
    let last = 0;
    for (let i = 0; i < 3000; i++) {
      h.add(`c${i}`);
      if (i === 1499) last = h.estimate();
    }
    expect(h.isSparse).toBe(false);
    expect(relErr(last, 1500)).toBeLessThanOrEqual(0.02);
    expect(relErr(h.estimate(), 3000)).toBeLessThanOrEqual(threeSigma);
  });

  it("empty estimates 0", () => {
    expect(new HyperLogLog().estimate()).toBe(0);
  });

  it.each([4, 10, 18])("precision %i works end to end", (precision) => {
    const h = filled(50_000, "p-", precision);
    expect(relErr(h.estimate(), 50_000)).toBeLessThanOrEqual((3 * 1.04) / Math.sqrt(2 ** precision));
    expect(HyperLogLog.decode(h.encode()).estimate()).toBe(h.estimate());
  });
});

describe("HyperLogLog hash and merge", () => {
  it("addHash(hash(x)) is add(x); the hash is a stable 53-bit integer", () => {
    const a = new HyperLogLog();
    const b = new HyperLogLog();
    for (let i = 0; i < 2000; i++) {
      a.add(`u${i}`);
      b.addHash(HyperLogLog.hash(`u${i}`));
    }
    expect(b.encode()).toEqual(a.encode());
    const h = HyperLogLog.hash("alice");
    expect(Number.isSafeInteger(h) && h >= 0).toBe(true);
    expect(HyperLogLog.hash("alice")).toBe(h);
    expect(HyperLogLog.hash("alicf")).not.toBe(h);
    expect(HyperLogLog.hash("")).toBe(HyperLogLog.hash(""));
  });

  it("merge of disjoint sets estimates the union (sparse+sparse, sparse+dense, dense+dense)", () => {
    for (const [na, nb] of [
      [200, 300],
      [200, 30_000],
      [30_000, 40_000],
    ] as const) {
      const a = filled(na, "a-");
      const b = filled(nb, "b-");
      const ab = a.clone();
      ab.merge(b);
      const ba = b.clone();
      ba.merge(a);
      expect(ab.estimate()).toBe(ba.estimate());
      const direct = filled(na, "a-");
      for (let i = 0; i < nb; i++) direct.add(`b-${i}`);
      expect(ab.estimate()).toBe(direct.estimate());
    }
  });

  it("refuses to merge different precisions", () => {
    let code: string | undefined;
    try {
      new HyperLogLog({ precision: 12 }).merge(new HyperLogLog());
    } catch (e) {
      code = (e as SketchError).code;
    }
    expect(code).toBe("TM_SKETCH_MISMATCH");
    expect(() => new HyperLogLog({ precision: 3 })).toThrow(/precision must be an integer in \[4, 18\]/);
  });
});

describe("HyperLogLog registers follow the definition", () => {
  const P = 10;
  /** Register i holds the largest rank: leading zeros + 1 of the hash's 53 − p bits after its top p (54 − p if all zero). */
  function reference(hashes: number[]): Uint8Array {
    const regs = new Uint8Array(1 << P);
    const restBits = BigInt(53 - P);
    for (const h of hashes) {
      const bits = BigInt(h);
      const idx = Number(bits >> restBits);
      const rest = bits & ((1n << restBits) - 1n);
      const rank = rest === 0n ? 54 - P : 53 - P - rest.toString(2).length + 1;
      regs[idx] = Math.max(regs[idx] as number, rank);
    }
    return regs;
  }
  /** Unpacks the documented dense encoding: 4-byte header, then registers 6 bits each. */
  function registersOf(h: HyperLogLog): Uint8Array {
    const bytes = h.encode();
    expect(bytes[3]).toBe(1);
    const regs = new Uint8Array(1 << P);
    for (let i = 0, j = 4; i < regs.length; i += 4, j += 3) {
      const v = (bytes[j] as number) | ((bytes[j + 1] as number) << 8) | ((bytes[j + 2] as number) << 16);
      for (let k = 0; k < 4; k++) regs[i + k] = (v >>> (6 * k)) & 63;
    }
    return regs;
  }
  const emptyDense = () => {
    const bytes = new Uint8Array(4 + ((1 << P) * 3) / 4);
    bytes.set([1, 0x48, P, 1]);
    return HyperLogLog.decode(bytes);
  };
  /** Random 53-bit hashes plus hashes with a single 1 at every depth (and none) after the index. */
  const hashes = fc
    .tuple(
      fc.array(fc.bigInt({ min: 0n, max: (1n << 53n) - 1n }), { maxLength: 40 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: (1 << P) - 1 }), fc.integer({ min: -1, max: 52 - P })), {
        maxLength: 40,
      }),
    )
    .map(([random, crafted]) => [
      ...random.map(Number),
      ...crafted.map(([idx, depth]) => idx * 2 ** (53 - P) + (depth < 0 ? 0 : 2 ** (52 - P - depth))),
    ]);

  it("whether the hashes went through the sparse form or straight into registers", () => {
    fc.assert(
      fc.property(hashes, (hs) => {
        const viaSparse = new HyperLogLog({ precision: P });
        for (const h of hs) viaSparse.addHash(h);
        expect(viaSparse.isSparse).toBe(true);
        viaSparse.merge(emptyDense());
        const direct = emptyDense();
        for (const h of hs) direct.addHash(h);
        const want = reference(hs);
        expect(registersOf(viaSparse)).toEqual(want);
        expect(registersOf(direct)).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  it("the estimate (from the histogram kept on each change) equals a recount of the registers after adds, merges, clones and decode", () => {
    const recount = (h: HyperLogLog): number => {
      const histogram = new Float64Array(53 - P + 2);
      for (const r of registersOf(h)) histogram[r] = (histogram[r] as number) + 1;
      return ertlEstimate(histogram, 1 << P, 53 - P);
    };
    fc.assert(
      fc.property(hashes, hashes, (a, b) => {
        const h = emptyDense();
        for (const x of a) h.addHash(x);
        expect(h.estimate()).toBe(recount(h));
        const other = emptyDense();
        for (const x of b) other.addHash(x);
        const c = h.clone();
        c.merge(other);
        expect(c.estimate()).toBe(recount(c));
        expect(h.estimate()).toBe(recount(h));
        const sparse = new HyperLogLog({ precision: P });
        for (const x of b) sparse.addHash(x);
        h.merge(sparse);
        expect(h.estimate()).toBe(c.estimate());
        expect(HyperLogLog.decode(c.encode()).estimate()).toBe(recount(c));
      }),
      { numRuns: 200 },
    );
  });
});
