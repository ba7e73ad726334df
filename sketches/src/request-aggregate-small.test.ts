/**
 * RequestAggregate's small form (docs/decisions/0015-light-state.md): while few latencies and
 * users came, they sit inline and the DDSketch and HyperLogLog are built only past that. In either
 * form an aggregate must give what the two sketches fed the same requests give — count, errors,
 * quantiles (exact: the element of rank ⌊q·(n−1)⌋ while small), distinct users — and the same bytes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DDSketch, EXACT_LIMIT } from "./ddsketch.js";
import { HyperLogLog } from "./hyperloglog.js";
import { RequestAggregate } from "./request-aggregate.js";

const RUNS = { numRuns: 200 };
const QS = [0, 0.5, 0.9, 0.95, 0.99, 0.999, 1];
const dyadic = fc.integer({ min: 0, max: 8_000_000 }).map((k) => k / 8);
/** Few requests (the small form), or enough to cross into the sketches. */
const request = fc.tuple(dyadic, fc.boolean(), fc.string({ maxLength: 6 }));
const few = fc.array(request, { maxLength: EXACT_LIMIT });
const some = fc.array(request, { maxLength: 60 });
const precision = fc.constantFrom(4, 10, 14);

type Req = [number, boolean, string];

function agg(rs: Req[], hllPrecision = 14): RequestAggregate {
  const a = new RequestAggregate({ hllPrecision });
  for (const [l, e, u] of rs) a.add(l, e, u);
  return a;
}

function latencies(rs: Req[]): DDSketch {
  const d = new DDSketch();
  for (const [l] of rs) d.add(l);
  return d;
}

/** What the two sketches say of the same requests. */
function reference(rs: Req[], hllPrecision = 14): { count: number; errors: number; qs: number[]; users: number } {
  const d = new DDSketch();
  const h = new HyperLogLog({ precision: hllPrecision });
  for (const [l, , u] of rs) {
    d.add(l);
    h.add(u);
  }
  return { count: d.count, errors: rs.filter((r) => r[1]).length, qs: d.quantiles(QS), users: h.estimate() };
}

function summary(a: RequestAggregate): { count: number; errors: number; qs: number[]; users: number } {
  return { count: a.count, errors: a.errors, qs: a.quantiles(QS), users: a.distinctUsers() };
}

describe("RequestAggregate small form", () => {
  it("a lone latency and user held inline answer, encode, weigh and change as the two-slot arrays did", () => {
    fc.assert(
      fc.property(request, request, precision, (r1, r2, p) => {
        const one = agg([r1], p);
        const two = agg([r1, r2], p);
        const ref1 = reference([r1], p);
        expect(one.quantiles(QS)).toEqual(ref1.qs);
        expect(one.distinctUsers()).toBe(ref1.users);
        expect(RequestAggregate.decode(one.encode()).encode()).toEqual(one.encode());
        expect(one.clone().encode()).toEqual(one.encode());
        expect(one.heapBytes()).toBe(agg([r1], p).heapBytes());
        // Two, then the second taken out again: back to the lone form, same bytes as one.
        const back = two.clone();
        back.subtract(agg([r2], p));
        expect(back.count).toBe(1);
        expect(back.quantiles(QS)).toEqual(ref1.qs);
        const merged = agg([r1], p);
        merged.merge(agg([r2], p));
        expect(merged.encode()).toEqual(two.encode());
        expect(two.quantiles(QS)).toEqual(reference([r1, r2], p).qs);
      }),
      RUNS,
    );
  });

  it("gives the sketches' values, and quantiles equal the exact rank while small", () => {
    fc.assert(
      fc.property(some, precision, (rs, p) => {
        const a = agg(rs, p);
        expect(summary(a)).toEqual(reference(rs, p));
        expect(a.users.estimate()).toBe(a.distinctUsers());
        if (rs.length > 0 && rs.length <= EXACT_LIMIT) {
          const sorted = rs.map((r) => r[0]).sort((x, y) => x - y);
          for (const q of QS) expect(a.quantiles([q])[0]).toBe(sorted[Math.floor(q * (sorted.length - 1))]);
        }
      }),
      RUNS,
    );
  });

  it("merge of small + small and small + big equals the aggregate of the concatenation, bytes too", () => {
    fc.assert(
      fc.property(few, some, precision, (xs, ys, p) => {
        for (const [l, r] of [
          [xs, ys],
          [ys, xs],
          [xs, xs],
        ] as const) {
          const m = agg(l, p);
          m.merge(agg(r, p));
          const whole = agg([...l, ...r], p);
          expect(summary(m)).toEqual(summary(whole));
          expect(m.encode()).toEqual(whole.encode());
        }
      }),
      RUNS,
    );
  });

  it("subtract takes a merged-in part back out exactly (users stay the union), atomically on failure", () => {
    fc.assert(
      fc.property(few, some, (xs, ys) => {
        const m = agg(xs);
        m.merge(agg(ys));
        const users = m.distinctUsers();
        m.subtract(agg(ys));
        const rest = agg(xs);
        // Quantiles as DDSketch's own subtract gives them (exact while both stayed small; else binned).
        const d = latencies(xs);
        d.merge(latencies(ys));
        d.subtract(latencies(ys));
        expect([m.count, m.errors, m.quantiles(QS)]).toEqual([rest.count, rest.errors, d.quantiles(QS)]);
        expect(m.distinctUsers()).toBe(users);
        // A prefix holding a latency this does not: refused, nothing changed.
        const before = m.encode();
        expect(() => m.subtract(agg([[9_000_001, false, "x"]]))).toThrow(
          expect.objectContaining({ code: "TM_SKETCH_NOT_SUBSET" }),
        );
        expect(m.encode()).toEqual(before);
      }),
      RUNS,
    );
  });

  it("encode/decode round-trips in either form, and a decoded aggregate goes on like the live one", () => {
    fc.assert(
      fc.property(some, some, precision, (xs, ys, p) => {
        const live = agg(xs, p);
        const back = RequestAggregate.decode(live.encode());
        expect(back.encode()).toEqual(live.encode());
        expect(summary(back)).toEqual(summary(live));
        // Decoded straight into the small form (no sketch made): the live one's form, weight included.
        if (xs.length <= EXACT_LIMIT) expect(back.heapBytes()).toBe(live.heapBytes());
        for (const [l, e, u] of ys) {
          live.add(l, e, u);
          back.add(l, e, u);
        }
        expect(back.encode()).toEqual(live.encode());
        expect(summary(back)).toEqual(summary(live));
      }),
      RUNS,
    );
  });

  it("a single request costs a few hundred bytes, not a sketch's", () => {
    const a = agg([[12.5, true, "alice"]]);
    expect(a.heapBytes()).toBeLessThan(300);
    expect(a.quantiles([0.5, 0.99])).toEqual([12.5, 12.5]);
    expect(Math.round(a.distinctUsers())).toBe(1);
  });
});
