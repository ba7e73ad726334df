import { describe, expect, it } from "vitest";
import { BarrierAlignment } from "./barrier-alignment.js";

const none = (): boolean => false;
const barrier = (worker: string, partitions: number[], n: number) => ({ worker, partitions, n });

describe("BarrierAlignment", () => {
  it("holds a worker's messages after its barrier until every partition's barrier arrived, then hands them back in order", () => {
    const a = new BarrierAlignment<string>(8);
    expect(a.barrier(barrier("w1", [0, 1, 2, 3], 1), 1_000, none).outcome).toBe("aligning");
    expect(a.holds("w1")).toBe(true);
    expect(a.holds("w2")).toBe(false);
    a.hold("w1:a");
    a.hold("w1:b");
    expect(a.barrier(barrier("w2", [4, 5, 6, 7], 1), 1_250, none).outcome).toBe("aligned");
    expect(a.take()).toEqual({ n: 1, alignmentMs: 250, workers: ["w1", "w2"], held: ["w1:a", "w1:b"] });
    expect(a.aligning).toBeNull();
    expect(a.holds("w1")).toBe(false);
    expect(a.lastN).toBe(1);
  });

  it("ignores replayed barriers, counts silent partitions as covered, and gives an older n up for a newer one", () => {
    const a = new BarrierAlignment<string>(8, 3);
    expect(a.barrier(barrier("w1", [0, 1, 2, 3], 3), 0, none).outcome).toBe("ignored");
    expect(a.barrier(barrier("w1", [0, 1, 2, 3], 4), 0, none).outcome).toBe("aligning");
    a.hold("held-4");
    const silentHigh = (p: number): boolean => p >= 4;
    expect(a.completeWith(none)).toBe(false);
    expect(a.completeWith(silentHigh)).toBe(true);
    // A barrier of n = 5 before 4 is aligned: 4 is given up, its held message released.
    const next = a.barrier(barrier("w1", [0, 1, 2, 3], 5), 10, none);
    expect(next).toEqual({ outcome: "aligning", released: ["held-4"] });
    expect(a.aligning).toBe(5);
    expect(a.barrier(barrier("w2", [4, 5, 6, 7], 4), 11, none).outcome).toBe("ignored");
    expect(a.giveUp()).toEqual([]);
    expect(a.aligning).toBeNull();
  });

  it("counts the bytes held, and ignores late barriers of an n it gave up", () => {
    const a = new BarrierAlignment<string>(8);
    a.barrier(barrier("w1", [0, 1, 2, 3], 1), 0, none);
    a.hold("m1", 300);
    a.hold("m2", 200);
    expect([a.heldCount, a.heldBytes]).toEqual([2, 500]);
    expect(a.giveUp()).toEqual(["m1", "m2"]);
    expect([a.heldBytes, a.aligning]).toEqual([0, null]);
    // The other worker's barrier 1 arrives after n = 1 was given up: no new alignment of it.
    expect(a.barrier(barrier("w2", [4, 5, 6, 7], 1), 5, none).outcome).toBe("ignored");
    expect(a.holds("w1")).toBe(false);
    expect(a.barrier(barrier("w1", [0, 1, 2, 3], 2), 6, none).outcome).toBe("aligning");
  });
});
