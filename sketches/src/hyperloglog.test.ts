import { describe, expect, it } from "vitest";
import { SketchError } from "./errors.js";
import { HyperLogLog } from "./hyperloglog.js";

function filled(n: number, prefix = "user-", precision = 14): HyperLogLog {
  const h = new HyperLogLog({ precision });
  for (let i = 0; i < n; i++) h.add(`${prefix}${i}`);
  return h;
}

const relErr = (est: number, n: number) => Math.abs(est - n) / n;

describe("HyperLogLog accuracy", () => {
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
    for (const [na, nb] of [[200, 300], [200, 30_000], [30_000, 40_000]] as const) {
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
