/**
 * DueCalendar against a brute-force oracle: a plain list, its (due, id) minimum found by a scan at
 * every pop. Pushes and pops are interleaved at random, dues spread within and far beyond a bucket,
 * some armed at or before what was already popped (a row re-armed for a transition due now).
 */
import { describe, expect, it } from "vitest";
import { Prng } from "../prng.js";
import { BUCKET_MS, DueCalendar } from "./due-calendar.js";

interface Entry {
  due: number;
  id: number;
}

function oraclePop(list: Entry[]): Entry | undefined {
  let at = -1;
  for (let i = 0; i < list.length; i++) {
    const e = list[i] as Entry;
    const best = list[at];
    if (best === undefined || e.due < best.due || (e.due === best.due && e.id < best.id)) at = i;
  }
  return at < 0 ? undefined : list.splice(at, 1)[0];
}

/** The (due, id) pops of the calendar and of the oracle, and every size the calendar reported that the oracle's did not match. */
function run(seed: number, steps: number, spreadMs: number): { got: number[]; want: number[]; sizes: number[] } {
  const prng = new Prng(seed);
  const rnd = (): number => prng.next();
  const q = new DueCalendar();
  const list: Entry[] = [];
  const got: number[] = [];
  const want: number[] = [];
  const sizes: number[] = [];
  let now = 1_767_225_600_000;
  const pop = (): boolean => {
    const e = oraclePop(list);
    got.push(q.peekDue());
    want.push(e?.due ?? Infinity);
    if (e === undefined) return false;
    got.push(q.peekId());
    want.push(e.id);
    q.pop();
    now = e.due;
    return true;
  };
  for (let step = 0; step < steps; step++) {
    if (rnd() < 0.55) {
      // Mostly ahead of the last pop, now and then at or before it, rarely far ahead (a TTL).
      const r = rnd();
      const ahead = r < 0.15 ? 3_600_000 : Math.floor(rnd() * spreadMs);
      const due = r < 0.1 ? now - Math.floor(rnd() * 3 * BUCKET_MS) : now + ahead;
      const id = Math.floor(rnd() * 50) - 5;
      q.push(due, id);
      list.push({ due, id });
    } else pop();
    if (q.size !== list.length) sizes.push(step);
  }
  while (pop());
  if (q.size !== 0) sizes.push(steps);
  return { got, want, sizes };
}

describe("DueCalendar", () => {
  it("pops in (due, id) order whatever the interleaving of pushes and pops", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const { got, want, sizes } = run(seed, 3_000, seed % 2 === 0 ? 5 * BUCKET_MS : 60_000);
      expect(got).toEqual(want);
      expect(sizes).toEqual([]);
    }
  });

  it("orders equal dues by id and takes dues of −Infinity and before the epoch", () => {
    const q = new DueCalendar();
    for (const [due, id] of [
      [5, 3],
      [-Infinity, 7],
      [5, 1],
      [-1_000, 2],
      [BUCKET_MS * 10, 0],
      [5, 2],
    ] as const)
      q.push(due, id);
    const out: [number, number][] = [];
    while (q.size > 0) {
      out.push([q.peekDue(), q.peekId()]);
      q.pop();
    }
    expect(out).toEqual([
      [-Infinity, 7],
      [-1_000, 2],
      [5, 1],
      [5, 2],
      [5, 3],
      [BUCKET_MS * 10, 0],
    ]);
  });

  it("orders entries the same whichever due came first (bucket numbers count from the first's)", () => {
    for (const first of [-Infinity, 0, 1_767_225_600_000, -1_767_225_600_000]) {
      const q = new DueCalendar();
      const dues = [first, 1_767_225_600_300, 1_767_225_600_000, 7, -3, 1_767_225_599_999];
      dues.forEach((due, id) => q.push(due, id));
      const out: number[] = [];
      while (q.size > 0) {
        out.push(q.peekDue());
        q.pop();
      }
      expect(out).toEqual([...dues].sort((a, b) => a - b));
    }
  });

  it("is empty after clear, and takes entries again", () => {
    const q = new DueCalendar();
    for (let i = 0; i < 500; i++) q.push(i * 37, i);
    q.peekDue();
    q.clear();
    expect([q.size, q.peekDue()]).toEqual([0, Infinity]);
    q.push(10, 1);
    q.push(-10, 2);
    expect([q.peekDue(), q.peekId(), q.size]).toEqual([-10, 2, 2]);
  });
});
