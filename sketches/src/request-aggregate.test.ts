import { describe, expect, it } from "vitest";
import { SketchError } from "./errors.js";
import { HyperLogLog } from "./hyperloglog.js";
import { RequestAggregate } from "./request-aggregate.js";

describe("RequestAggregate", () => {
  it("counts requests and errors, and holds latency and users", () => {
    const a = new RequestAggregate();
    a.add(10, false, "alice");
    a.add(250, true, "bob");
    a.addHashed(30, false, HyperLogLog.hash("alice"));
    expect(a.count).toBe(3);
    expect(a.errors).toBe(1);
    expect(a.latency.max).toBe(250);
    expect(a.users.estimate()).toBeCloseTo(2, 5);
  });

  it("decodeRange reads an encoding inside a larger buffer as decode reads it alone, and only that range", () => {
    for (const n of [0, 1, 5, 40, 3000]) {
      const a = new RequestAggregate({ hllPrecision: 10 });
      for (let i = 0; i < n; i++) a.add((i * 7919) % 500, i % 9 === 0, `u${i % 700}`);
      const bytes = a.encode();
      const framed = new Uint8Array(bytes.length + 7);
      framed.set(bytes, 3);
      framed[bytes.length + 3] = 0x99;
      const b = RequestAggregate.decodeRange(framed, 3, 3 + bytes.length);
      expect(b.encode()).toEqual(bytes);
      expect(b.quantiles([0.5, 0.99])).toEqual(RequestAggregate.decode(bytes).quantiles([0.5, 0.99]));
      expect(b.distinctUsers()).toBe(a.distinctUsers());
      expect(() => RequestAggregate.decodeRange(framed, 3, 4 + bytes.length)).toThrow(SketchError);
      expect(() => RequestAggregate.decodeRange(framed, 3, 2 + bytes.length)).toThrow(SketchError);
    }
  });

  it("a bad latency throws and counts nothing", () => {
    const a = new RequestAggregate();
    expect(() => a.add(-5, true, "x")).toThrow(SketchError);
    expect(a.count).toBe(0);
    expect(a.errors).toBe(0);
    expect(a.users.estimate()).toBe(0);
  });

  it("merge adds, subtract takes a merged part back out (users stay the union)", () => {
    const a = new RequestAggregate();
    const b = new RequestAggregate();
    for (let i = 0; i < 50; i++) a.add(i + 1, i % 5 === 0, `a${i}`);
    for (let i = 0; i < 30; i++) b.add(i * 3 + 2, i % 3 === 0, `b${i}`);
    const merged = a.clone();
    merged.merge(b);
    expect(merged.count).toBe(80);
    expect(merged.errors).toBe(a.errors + b.errors);
    const users = merged.users.estimate();
    merged.subtract(b);
    expect(merged.count).toBe(a.count);
    expect(merged.errors).toBe(a.errors);
    for (const q of [0.1, 0.5, 0.99]) expect(merged.latency.quantile(q)).toBe(a.latency.quantile(q));
    expect(merged.users.estimate()).toBe(users);
  });

  it("subtracting more errors than held throws TM_SKETCH_NOT_SUBSET", () => {
    const a = new RequestAggregate();
    a.add(1, false, "u");
    const b = new RequestAggregate();
    b.add(1, true, "u");
    expect(() => a.subtract(b)).toThrow(expect.objectContaining({ code: "TM_SKETCH_NOT_SUBSET" }));
    expect(a.errors).toBe(0);
    expect(a.count).toBe(1);
  });

  it("clone is independent", () => {
    const a = new RequestAggregate();
    a.add(5, true, "u");
    const c = a.clone();
    c.add(7, false, "v");
    expect(a.count).toBe(1);
    expect(c.count).toBe(2);
  });

  it("encodes and decodes to an equal aggregate with custom options", () => {
    const a = new RequestAggregate({ relativeAccuracy: 0.02, hllPrecision: 12 });
    for (let i = 0; i < 500; i++) a.add(i * 0.7, i % 7 === 0, `u${i % 90}`);
    const b = RequestAggregate.decode(a.encode());
    expect(b.count).toBe(a.count);
    expect(b.errors).toBe(a.errors);
    expect(b.latency.relativeAccuracy).toBe(0.02);
    expect(b.users.precision).toBe(12);
    expect(b.latency.quantile(0.9)).toBe(a.latency.quantile(0.9));
    expect(b.users.estimate()).toBe(a.users.estimate());
    expect(b.encode()).toEqual(a.encode());
  });

  it("encodeInto hands over exactly encode()'s bytes (empty, exact, binned, sparse table, dense; scratch reused between calls)", () => {
    const seen: Uint8Array[] = [];
    for (const n of [0, 3, 40, 900, 6000]) {
      const a = new RequestAggregate();
      for (let i = 0; i < n; i++) a.add(1 + (i % 700) * 1.7, i % 9 === 0, `user-${i}`);
      let got: Uint8Array | null = null;
      a.encodeInto((buf, length) => (got = buf.slice(0, length)));
      expect(got).toEqual(a.encode());
      expect(RequestAggregate.decode(got as unknown as Uint8Array).encode()).toEqual(a.encode());
      seen.push(got as unknown as Uint8Array);
    }
    expect(new Set(seen.map((b) => b.length)).size).toBe(5);
  });

  it("heapBytes grows with what the aggregate holds", () => {
    const a = new RequestAggregate();
    const empty = a.heapBytes();
    for (let i = 0; i < 5000; i++) a.add(1 + (i % 400) * 3, false, `u${i}`);
    // Dense users at p = 14: 2^14 registers of 4 bits (8 192 bytes; 6 bits once one passes 15) and their histogram.
    expect(a.heapBytes()).toBeGreaterThan(empty + 8_192);
  });

  it("dataBytes counts the data packed in every form: 8 per exact latency, 4 per sparse entry, bins' span, registers", () => {
    const a = new RequestAggregate({ hllPrecision: 10 });
    expect(a.dataBytes()).toBe(0);
    a.add(10, false, "alice");
    expect(a.dataBytes()).toBe(8 + 4);
    for (let i = 1; i < 10; i++) a.add(10 + i, false, `u${i}`);
    expect(a.dataBytes()).toBe(10 * 8 + 10 * 4);
    for (let i = 10; i < 3000; i++) a.add(1 + (i % 400) * 3, false, `u${i}`);
    const keys = a.latency.bins().map(([k]) => k);
    // One byte a bin while every count is at most 255 (3000 events over ≥ 300 bins).
    const span = (keys.at(-1) as number) - (keys[0] as number) + 1;
    // Dense at p = 10: 2^10 registers of 4 bits, and 3 bytes for each register past 15 (rare; the histogram is derived).
    const overflow = a.dataBytes() - span - 512;
    expect(overflow % 3).toBe(0);
    expect(overflow).toBeGreaterThanOrEqual(0);
    expect(overflow).toBeLessThanOrEqual(3 * 4);
  });

  it("decodes and clones a subclass as the subclass, with the same bytes, whatever form it is in", () => {
    class Tagged extends RequestAggregate {
      tag = "t";
    }
    for (const n of [0, 1, 2, 17, 3000]) {
      const a = new Tagged({ hllPrecision: 10 });
      for (let i = 0; i < n; i++) a.add(1 + (i % 97) * 7, i % 5 === 0, `u${i % 700}`);
      const bytes = a.encode();
      const framed = new Uint8Array(bytes.length + 4);
      framed.set(bytes, 2);
      for (const back of [Tagged.decode(bytes), Tagged.decodeRange(framed, 2, 2 + bytes.length), a.clone()]) {
        expect(back).toBeInstanceOf(Tagged);
        expect((back as Tagged).tag).toBe("t");
        expect(back.encode()).toEqual(bytes);
      }
      // The base class still decodes as itself, also after a subclass's decode.
      expect(Object.getPrototypeOf(RequestAggregate.decode(bytes))).toBe(RequestAggregate.prototype);
      expect(() => Tagged.decodeRange(framed, 2, 3 + bytes.length)).toThrow(SketchError);
      expect(Object.getPrototypeOf(RequestAggregate.decode(bytes))).toBe(RequestAggregate.prototype);
    }
  });
});
