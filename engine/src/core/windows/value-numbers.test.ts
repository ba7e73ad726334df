import { describe, expect, it } from "vitest";
import { Prng } from "../prng.js";
import type { Aggregate } from "./aggregate.js";
import { sketchAggregates } from "./sketch-aggregate.js";
import { hasValueNumbers } from "./value-numbers.js";

const kind = sketchAggregates(0.01, 14);

/** The value of an aggregate that never computed one before: decoded from the same bytes. */
const fresh = (a: Aggregate): ReturnType<Aggregate["value"]> => kind.decode(a.encode()).value();

describe("an aggregate's value kept as nine numbers", () => {
  it("equals a value computed afresh (same fields, order and JSON) through adds, merges and subtracts", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rng = new Prng(seed);
      const route = rng.int(2) === 0;
      const a = kind.create(route);
      const added: Aggregate[] = [];
      for (let step = 0; step < 40; step++) {
        const op = rng.int(6);
        if (op < 4) {
          for (let k = rng.int(30); k > 0; k--)
            a.add(rng.next() * 2000, rng.int(7) === 0, kind.hashUser(`u${rng.int(3000)}`));
        } else if (op === 4) {
          const b = kind.create(route);
          for (let k = rng.int(40); k > 0; k--)
            b.add(rng.next() * 900, rng.int(5) === 0, kind.hashUser(`v${rng.int(99)}`));
          a.merge(b);
          added.push(b);
        } else if (added.length > 0) {
          // A prefix merged in before, taken out (discarding panes subtract on copies; the count may come back later).
          a.subtract(added.pop() as Aggregate);
        }
        const v = a.value();
        const f = fresh(a);
        expect(v).toEqual(f);
        expect(JSON.stringify(v)).toBe(JSON.stringify(f));
        expect(Object.isFrozen(v)).toBe(true);
        // Read twice at one count: the same numbers (kept past the small form), equal values.
        expect(a.value()).toEqual(v);
      }
    }
  });

  it("the kept numbers are one array while the count is unchanged, a new one after an add", () => {
    const a = kind.create(true);
    expect(hasValueNumbers(a)).toBe(true);
    if (!hasValueNumbers(a)) return;
    for (let i = 0; i < 40; i++) a.add(10 + i, false, kind.hashUser(`u${i}`));
    const n = a.valueNumbers();
    expect(a.valueNumbers()).toBe(n);
    expect(n[0]).toBe(40);
    a.add(5, true, kind.hashUser("x"));
    expect(a.valueNumbers()).not.toBe(n);
    expect(a.valueNumbers()[0]).toBe(41);
    // The small form's are made at each read (nothing kept per key with few events).
    const small = kind.create(true);
    small.add(3, false, kind.hashUser("u"));
    expect(hasValueNumbers(small) && small.valueNumbers()).not.toBe(hasValueNumbers(small) && small.valueNumbers());
  });
});
