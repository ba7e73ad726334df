import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Timer } from "../timer-queue.js";
import { TimerWheel } from "./timer-wheel.js";

interface T extends Timer {
  due: number;
  readonly target: number;
}

const before = (a: T, b: T): boolean => {
  if (a.due !== b.due) return a.due < b.due;
  if (a.kind !== b.kind) return a.kind < b.kind;
  if (a.policy !== b.policy) return a.policy < b.policy;
  return a.target < b.target;
};

const byKey = (a: T, b: T): number => (before(a, b) ? -1 : before(b, a) ? 1 : 0);

/** A step: arm a timer `ahead` ms after the time of the last pop (negative: already due), or pop one. */
const step = fc.oneof(
  fc.record({ ahead: fc.integer({ min: -3_000, max: 20_000 }), kind: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ ahead: fc.integer({ min: -50, max: 500 }), kind: fc.integer({ min: 1, max: 5 }) }),
  fc.constant("pop" as const),
);

describe("TimerWheel", () => {
  it("pops in the strict total order, with timers armed into the head bucket and before it", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 400 }), fc.integer({ min: 1, max: 5_000 }), (steps, bucketMs) => {
        const wheel = new TimerWheel<T>(bucketMs, byKey);
        const pending: T[] = [];
        let now = 1_767_225_600_000;
        let id = 0;
        for (const s of steps) {
          if (s === "pop") {
            pending.sort(byKey);
            const want = pending.shift();
            expect(wheel.peek()).toBe(want);
            expect(wheel.pop()).toBe(want);
            if (want !== undefined) now = Math.max(now, want.due);
          } else {
            const t: T = { due: now + s.ahead, kind: s.kind, policy: id % 3, target: id++ };
            wheel.push(t);
            pending.push(t);
          }
          expect(wheel.size).toBe(pending.length);
        }
        pending.sort(byKey);
        for (const want of pending) expect(wheel.pop()).toBe(want);
        expect(wheel.pop()).toBeUndefined();
        expect(wheel.size).toBe(0);
      }),
      { numRuns: 300, seed: 20261202 },
    );
  });

  it("orders equal dues by kind, policy and target", () => {
    const wheel = new TimerWheel<T>(1_000, byKey);
    const ts: T[] = [
      { due: 5_000, kind: 3, policy: 0, target: 2 },
      { due: 5_000, kind: 2, policy: 1, target: 1 },
      { due: 5_000, kind: 2, policy: 0, target: 9 },
      { due: 5_000, kind: 2, policy: 0, target: 3 },
      { due: 4_999, kind: 5, policy: 2, target: 7 },
    ];
    for (const t of ts) wheel.push(t);
    expect([1, 2, 3, 4, 5].map(() => wheel.pop())).toEqual([ts[4], ts[3], ts[2], ts[1], ts[0]]);
  });

  it("puts a due of -Infinity before everything, also as the first timer it ever holds", () => {
    const wheel = new TimerWheel<T>(1_000, byKey);
    const ts: T[] = [
      { due: -Infinity, kind: 1, policy: 1, target: 4 },
      { due: 1_767_225_600_000, kind: 2, policy: 0, target: 1 },
      { due: -Infinity, kind: 1, policy: 0, target: 3 },
      { due: 1_767_225_601_500, kind: 2, policy: 0, target: 2 },
    ];
    for (const t of ts) wheel.push(t);
    expect([1, 2, 3, 4].map(() => wheel.pop())).toEqual([ts[2], ts[0], ts[1], ts[3]]);
  });

  it("settles a bucket before it becomes the head: dropped timers never pop, moved ones pop at their later due", () => {
    const plan = fc.record({
      ahead: fc.integer({ min: 0, max: 20_000 }),
      later: fc.integer({ min: 0, max: 6_000 }),
      drop: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(plan, { maxLength: 200 }), fc.integer({ min: 1, max: 3_000 }), (plans, bucketMs) => {
        const settled = new Set<T>();
        const moves = new Map<T, { later: number; drop: boolean }>();
        // Each timer is settled once at its first bucket (moved or dropped then), kept as is afterwards.
        const settle = (t: T): boolean => {
          const m = moves.get(t);
          if (m === undefined || settled.has(t)) return true;
          settled.add(t);
          t.due += m.later;
          return !m.drop;
        };
        const wheel = new TimerWheel<T>(bucketMs, byKey, settle);
        const now = 1_767_225_600_000;
        const all = plans.map((p, i) => {
          const t: T = { due: now + p.ahead, kind: 1 + (i % 3), policy: i % 2, target: i };
          moves.set(t, p);
          wheel.push(t);
          return t;
        });
        const popped: T[] = [];
        for (let t = wheel.pop(); t !== undefined; t = wheel.pop()) popped.push(t);
        const kept = all.filter((t) => !(moves.get(t) as { drop: boolean }).drop).sort(byKey);
        expect(popped).toEqual(kept);
        expect(wheel.size).toBe(0);
      }),
      { numRuns: 300, seed: 20261202 },
    );
  });
});
