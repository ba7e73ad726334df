import { describe, expect, it } from "vitest";
import { QueryLimitError } from "../promql/index.js";
import { QuerySlots } from "./query-slots.js";

const never = new Promise<void>(() => {});
const limitOf = (p: Promise<void>) =>
  p.then(
    () => "granted",
    (e: unknown) => (e instanceof QueryLimitError ? e.limit : "other"),
  );

describe("QuerySlots", () => {
  it("grants up to max at once, queues up to maxQueued in order, refuses the next at once", async () => {
    const states: Array<[number, number]> = [];
    const slots = new QuerySlots(2, 2, (r, q) => states.push([r, q]));
    await slots.acquire(10_000, never);
    await slots.acquire(10_000, never);
    const order: string[] = [];
    const third = slots.acquire(10_000, never).then(() => order.push("third"));
    const fourth = slots.acquire(10_000, never).then(() => order.push("fourth"));
    expect(await limitOf(slots.acquire(10_000, never))).toBe("queue");
    expect(states.at(-1)).toEqual([2, 2]);
    slots.release();
    slots.release();
    await Promise.all([third, fourth]);
    expect(order).toEqual(["third", "fourth"]);
    expect(states.at(-1)).toEqual([2, 0]);
    slots.release();
    slots.release();
    expect(states.at(-1)).toEqual([0, 0]);
  });

  it("gives up waiting at the deadline or when the client goes away, leaving the queue and slots right", async () => {
    const slots = new QuerySlots(1, 5);
    await slots.acquire(10_000, never);
    expect(await limitOf(slots.acquire(5, never))).toBe("timeout");
    let leave = (): void => {};
    const gone = new Promise<void>((r) => (leave = r));
    const waiting = limitOf(slots.acquire(10_000, gone));
    leave();
    expect(await waiting).toBe("canceled");
    slots.release(); // the slot is free again: the next query gets it at once
    expect(await limitOf(slots.acquire(0, never))).toBe("granted");
  });
});
