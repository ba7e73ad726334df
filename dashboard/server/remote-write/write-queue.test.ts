import { describe, expect, it } from "vitest";
import type { OutSample } from "./settled-samples.js";
import { SeriesNewest } from "./series-newest.js";
import { WriteQueue } from "./write-queue.js";

const s = (series: string, ts: number, value = ts): OutSample => ({
  series,
  labels: [["__name__", series]],
  ts,
  value,
});

describe("WriteQueue", () => {
  it("sends at most one sample per series per batch, oldest first, and acks a message once all its samples are done", () => {
    const q = new WriteQueue(new SeriesNewest(100), 1000);
    q.offer(1, [s("a", 20), s("a", 10), s("b", 10)]);
    q.offer(2, [s("a", 30)]);
    expect(q.takeDone()).toEqual([]);
    const b1 = q.nextBatch(10);
    expect(b1.map((x) => [x.series, x.ts])).toEqual([
      ["a", 10],
      ["b", 10],
    ]);
    expect(q.nextBatch(10)).toEqual([]); // a's next waits for its first
    q.settle(b1, true);
    expect(q.takeDone()).toEqual([]);
    const b2 = q.nextBatch(10);
    expect(b2.map((x) => x.ts)).toEqual([20]);
    q.settle(b2, true);
    expect(q.takeDone()).toEqual([1]);
    q.settle(q.nextBatch(10), false);
    expect(q.takeDone()).toEqual([2]);
    expect(q.pending).toBe(0);
    expect(q.accepted.newest("a")).toEqual({ ts: 20, value: 20, seq: 1 });
  });

  it("skips a message read again, drops a later message's older or revised sample", () => {
    const q = new WriteQueue(new SeriesNewest(100), 1000);
    q.offer(5, [s("a", 10), s("a", 20)]);
    q.settle(q.nextBatch(10), true);
    q.settle(q.nextBatch(10), true);
    expect(q.takeDone()).toEqual([5]);
    // Message 5 again (after a restart): written before.
    expect(q.offer(5, [s("a", 10), s("a", 20)])).toMatchObject({ queued: 0, resent: 2, dropped: [] });
    // A later message older than the newest written: not writable.
    const r = q.offer(6, [s("a", 15), s("a", 20, 99), s("a", 20)]);
    expect(r.queued).toBe(0);
    expect(r.resent).toBe(1);
    expect(r.dropped.map((d) => d.reason)).toEqual(["out-of-order", "revised"]);
    expect(q.takeDone()).toEqual([5, 6]);
  });

  it("is full at its capacity; the newest-sample snapshot survives a round trip", () => {
    const q = new WriteQueue(new SeriesNewest(100), 2);
    q.offer(1, [s("a", 1), s("b", 1)]);
    expect(q.full).toBe(true);
    q.settle(q.nextBatch(1), true);
    expect(q.full).toBe(false);
    const back = SeriesNewest.from(JSON.parse(JSON.stringify(q.accepted)), 100);
    expect(back.newest("a")).toEqual({ ts: 1, value: 1, seq: 1 });
  });

  it("forgets the series with the oldest newest sample past its bound, counted", () => {
    const n = new SeriesNewest(10);
    for (let i = 0; i < 11; i++) n.record(`s${i}`, 100 + i, 0, 1);
    expect(n.size).toBe(10);
    expect(n.forgotten).toBe(1);
    expect(n.newest("s0")).toBeUndefined();
  });
});
