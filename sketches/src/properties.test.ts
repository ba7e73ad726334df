import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DDSketch } from "./ddsketch.js";
import { HyperLogLog } from "./hyperloglog.js";
import { RequestAggregate } from "./request-aggregate.js";

const RUNS = { numRuns: 150 };
/** Dyadic latencies (k/8 ms): their sums are exact in a double, so whole encodings can be compared. */
const dyadic = fc.integer({ min: 0, max: 8_000_000 }).map((k) => k / 8);
const dyadics = fc.array(dyadic, { maxLength: 120 });
/** Any non-negative finite latency, subnormals and huge values included. */
const anyLatency = fc.oneof(fc.double({ min: 0, max: 1e300, noNaN: true, noDefaultInfinity: true }), fc.constant(0));
const users = fc.array(fc.string({ maxLength: 12 }), { maxLength: 120 });
/** Sizes that cross the sparse → dense boundary of a precision-10 HLL (96 entries). */
const manyUsers = fc.array(fc.string({ maxLength: 6 }), { maxLength: 400 });

function dd(values: number[]): DDSketch {
  const s = new DDSketch();
  for (const v of values) s.add(v);
  return s;
}
function hll(values: string[], precision = 10): HyperLogLog {
  const h = new HyperLogLog({ precision });
  for (const v of values) h.add(v);
  return h;
}
function merged<T extends { merge(o: T): void; clone(): T }>(a: T, b: T): T {
  const c = a.clone();
  c.merge(b);
  return c;
}

describe("DDSketch properties", () => {
  it("merge is commutative and associative", () => {
    fc.assert(
      fc.property(dyadics, dyadics, dyadics, (xs, ys, zs) => {
        const [a, b, c] = [dd(xs), dd(ys), dd(zs)];
        expect(merged(a, b).encode()).toEqual(merged(b, a).encode());
        expect(merged(merged(a, b), c).encode()).toEqual(merged(a, merged(b, c)).encode());
      }),
      RUNS,
    );
  });

  it("merge(a, b) is the sketch of the concatenated data", () => {
    fc.assert(
      fc.property(dyadics, dyadics, (xs, ys) => {
        expect(merged(dd(xs), dd(ys)).encode()).toEqual(dd([...xs, ...ys]).encode());
      }),
      RUNS,
    );
  });

  it("encode/decode round-trips exactly for any non-negative values", () => {
    fc.assert(
      fc.property(fc.array(anyLatency, { maxLength: 150 }), (xs) => {
        const s = dd(xs);
        const back = DDSketch.decode(s.encode());
        expect(back.encode()).toEqual(s.encode());
        expect(back.count).toBe(s.count);
        expect(back.sum).toBe(s.sum);
        for (const q of [0, 0.25, 0.5, 0.99, 1]) expect(Object.is(back.quantile(q), s.quantile(q))).toBe(true);
      }),
      RUNS,
    );
  });

  it("subtract undoes merge: same bins and counts, extremes exact or within α", () => {
    fc.assert(
      fc.property(dyadics, dyadics, (xs, ys) => {
        const a = dd(xs);
        const b = dd(ys);
        const back = merged(a, b);
        back.subtract(b);
        expect(back.bins()).toEqual(a.bins());
        expect(back.count).toBe(a.count);
        expect(back.sum).toBe(a.sum);
        if (a.count === 0) return;
        for (const [got, want] of [
          [back.min, a.min],
          [back.max, a.max],
        ] as const) {
          expect(Math.abs(got - want)).toBeLessThanOrEqual(0.01 * want + 1e-12);
        }
        for (let i = 1; i < 10; i++) {
          const q = i / 10;
          expect(Math.abs(back.quantile(q) - a.quantile(q))).toBeLessThanOrEqual(0.0201 * a.quantile(q) + 1e-12);
        }
      }),
      RUNS,
    );
  });

  it("remove of each added value empties the sketch in any order", () => {
    fc.assert(
      fc.property(dyadics, fc.integer(), (xs, seed) => {
        const s = dd(xs);
        const order = xs.map((v, i) => [v, (i * 2654435761 + seed) >>> 0] as const).sort((p, q) => p[1] - q[1]);
        for (const [v] of order) s.remove(v);
        expect(s.count).toBe(0);
        expect(s.bins()).toEqual([]);
      }),
      RUNS,
    );
  });
});

describe("HyperLogLog properties", () => {
  it("merge is commutative and associative, sparse and dense", () => {
    fc.assert(
      fc.property(manyUsers, manyUsers, users, (xs, ys, zs) => {
        const [a, b, c] = [hll(xs), hll(ys), hll(zs)];
        expect(merged(a, b).estimate()).toBe(merged(b, a).estimate());
        expect(merged(merged(a, b), c).estimate()).toBe(merged(a, merged(b, c)).estimate());
      }),
      RUNS,
    );
  });

  it("merge(a, b) estimates exactly what the sketch of the concatenated data does", () => {
    fc.assert(
      fc.property(manyUsers, manyUsers, (xs, ys) => {
        const m = merged(hll(xs), hll(ys));
        const direct = hll([...xs, ...ys]);
        expect(m.estimate()).toBe(direct.estimate());
        if (m.isSparse === direct.isSparse) expect(m.encode()).toEqual(direct.encode());
      }),
      RUNS,
    );
  });

  it("encode/decode round-trips exactly", () => {
    fc.assert(
      fc.property(manyUsers, (xs) => {
        const h = hll(xs);
        const back = HyperLogLog.decode(h.encode());
        expect(back.encode()).toEqual(h.encode());
        expect(back.estimate()).toBe(h.estimate());
        expect(back.isSparse).toBe(h.isSparse);
      }),
      RUNS,
    );
  });
});

describe("RequestAggregate properties", () => {
  const requests = fc.array(fc.tuple(dyadic, fc.boolean(), fc.string({ maxLength: 8 })), { maxLength: 80 });
  const agg = (rs: [number, boolean, string][]) => {
    const a = new RequestAggregate();
    for (const [l, e, u] of rs) a.add(l, e, u);
    return a;
  };

  it("merge equals the aggregate of the concatenation; encode/decode round-trips; subtract undoes merge", () => {
    fc.assert(
      fc.property(requests, requests, (xs, ys) => {
        const a = agg(xs);
        const b = agg(ys);
        const m = merged(a, b);
        expect(m.encode()).toEqual(agg([...xs, ...ys]).encode());
        expect(RequestAggregate.decode(m.encode()).encode()).toEqual(m.encode());
        m.subtract(b);
        expect([m.count, m.errors, m.latency.bins()]).toEqual([a.count, a.errors, a.latency.bins()]);
      }),
      RUNS,
    );
  });
});
