import { describe, expect, it } from "vitest";
import { DelayQueue } from "./delay-queue.js";
import { Prng } from "./prng.js";

describe("DelayQueue", () => {
  it("releases exactly the due items, earliest first, and keeps the rest", () => {
    const rng = new Prng(11);
    const q = new DelayQueue<number>();
    const times = Array.from({ length: 2000 }, () => Math.floor(rng.uniform(0, 10_000)));
    times.forEach((t) => q.push(t, t));
    const due = q.popDue(5000);
    expect(due).toEqual(times.filter((t) => t <= 5000).sort((a, b) => a - b));
    expect(q.size).toBe(times.filter((t) => t > 5000).length);
    const limited = q.popDue(10_000, 10);
    expect(limited).toHaveLength(10);
    expect(q.popDue(10_000)).toEqual(
      times
        .filter((t) => t > 5000)
        .sort((a, b) => a - b)
        .slice(10),
    );
    expect(q.size).toBe(0);
  });
});
