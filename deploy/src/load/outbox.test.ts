import { describe, expect, it } from "vitest";
import { Outbox } from "./outbox.js";

const batch = (n: number, tag = ""): { events: number[]; tag: string } => ({ events: Array.from({ length: n }), tag });

describe("Outbox", () => {
  it("hands batches out first in first out", () => {
    const o = new Outbox<ReturnType<typeof batch>>(100);
    o.offer(batch(10, "a"));
    o.offer(batch(20, "b"));
    expect(o.queuedEvents).toBe(30);
    expect(o.take()?.tag).toBe("a");
    expect(o.take()?.tag).toBe("b");
    expect(o.take()).toBeUndefined();
    expect(o.queuedEvents).toBe(0);
  });

  it("sheds a batch that would take it past the cap, counts it, and takes batches again once there is room", () => {
    const o = new Outbox<ReturnType<typeof batch>>(25);
    expect(o.offer(batch(10))).toBe(true);
    expect(o.offer(batch(10))).toBe(true);
    expect(o.offer(batch(10))).toBe(false);
    expect(o.offer(batch(5))).toBe(true);
    expect(o.shedEvents).toBe(10);
    expect(o.queuedEvents).toBe(25);
    o.take();
    expect(o.offer(batch(10))).toBe(true);
    expect(o.shedEvents).toBe(10);
  });

  it("takes one batch larger than the cap when it is empty, and drains what is left", () => {
    const o = new Outbox<ReturnType<typeof batch>>(5);
    expect(o.offer(batch(50))).toBe(true);
    expect(o.drain()).toHaveLength(1);
    expect(o.queuedEvents).toBe(0);
  });
});
