import { describe, expect, it } from "vitest";
import type { PaneValue } from "../../protocol.js";
import { Prng } from "../prng.js";
import { hasPoint, newKindPoints, nowcastAt, pointAt, recordPoint, type NowcastValue } from "./kind-points.js";
import { SLOTS } from "./kind-slot.js";

const value = (rng: Prng): PaneValue => {
  const count = Math.floor(rng.next() * 1000);
  const errors = Math.floor(rng.next() * count);
  return { count, errors, errorRate: 0, p50: 0, p90: 0, p95: 0, p99: rng.next() * 500, p999: 0, users: count >> 1 };
};

describe("stage points (rows only for the slots shown)", () => {
  it("answers what a dense per-slot table of the same records answers, in any order of slots", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rng = new Prng(seed);
      const p = newKindPoints();
      const dense = new Map<number, { v: PaneValue; n: NowcastValue | null }>();
      for (let k = Math.floor(rng.next() * 20); k > 0; k--) {
        const slot = Math.floor(rng.next() * SLOTS);
        const v = value(rng);
        const n = rng.next() < 0.5 ? null : { count: rng.next() * 9, errorRate: rng.next(), p99: NaN, users: 3 };
        recordPoint(p, slot, v, n);
        dense.set(slot, { v, n });
      }
      expect(p.v.length).toBe(8 * dense.size);
      for (let slot = 0; slot < SLOTS; slot++) {
        const d = dense.get(slot);
        expect(hasPoint(p, slot)).toBe(d !== undefined);
        const at = pointAt(p, slot);
        expect(at).toEqual(d ? { count: d.v.count, errors: d.v.errors, p99: d.v.p99, users: d.v.users } : null);
        expect(nowcastAt(p, slot)).toEqual(d?.n ?? null);
      }
    }
  });
});
