import { afterEach, describe, expect, it, vi } from "vitest";
import { COORDINATED_MS } from "./checkpoint-spacing.js";
import type { Taken } from "./encode-cut.js";
import { MergeTrigger } from "./merge-trigger.js";
import { WorkerTrigger } from "./worker-trigger.js";

const spacing = { checkpointEveryMs: 1_000, checkpointMinWallMs: 100 };
const taken = (workMs: number, holdWorkMs: number) => ({ workMs, holdWorkMs }) as Taken;

afterEach(() => {
  vi.useRealTimers();
});

describe("WorkerTrigger", () => {
  it("is due every checkpointEvery of log time, spaced by checkpointMinWall and 20× the last encoding's work", () => {
    vi.useFakeTimers({ now: 10_000 });
    const t = new WorkerTrigger(spacing, () => undefined);
    t.restored(5_000);
    expect(t.due(5_999)).toBeNull(); // under checkpointEvery past the restored log time
    expect(t.due(6_000)).toEqual({});
    t.cut(6_000, Date.now());
    t.encoded(taken(10, 10));
    expect(t.due(7_000)).toBeNull(); // 20 × 10 ms of work = 200 ms of wall clock not passed
    vi.advanceTimersByTime(199);
    expect(t.due(7_000)).toBeNull();
    vi.advanceTimersByTime(1);
    expect(t.due(7_000)).toEqual({});
  });

  it("cuts the coordinator's checkpoint at once, sends its barrier after the cut, acknowledges it once durable", () => {
    vi.useFakeTimers({ now: 50_000 });
    const barriers: number[] = [];
    const t = new WorkerTrigger(spacing, (n) => barriers.push(n));
    const acks: object[] = [];
    t.onBarrierCheckpoint = (a) => acks.push(a);
    t.request(3, 49_000);
    t.request(2, 48_000); // an older n does not replace the newer
    const plan = t.due(0);
    expect(plan?.barrier).toBe(3);
    expect(barriers).toEqual([]);
    plan?.afterCut?.();
    expect(barriers).toEqual([3]);
    plan?.durable?.("f", taken(1, 7), 50_000);
    expect(acks).toEqual([{ n: 3, file: "f", startDelayMs: 1_000, holdWorkMs: 7 }]);
    expect(t.due(1e12)).toBeNull(); // none of its own while the coordinator paces them
    vi.advanceTimersByTime(COORDINATED_MS);
    expect(t.due(1e12)).toEqual({});
  });
});

describe("MergeTrigger", () => {
  it("is due every checkpointEvery of log time, checkpointMinWall apart, never while aligning nor soon after an alignment", () => {
    let now = 0;
    let aligning = false;
    const t = new MergeTrigger(
      spacing,
      () => aligning,
      () => now,
    );
    expect(t.due(0)).toEqual({});
    t.cut(0, now);
    expect(t.due(999)).toBeNull();
    now = 99;
    expect(t.due(1_000)).toBeNull(); // under checkpointMinWall
    now = 100;
    aligning = true;
    expect(t.due(1_000)).toBeNull();
    aligning = false;
    expect(t.due(1_000)).toEqual({});
    t.aligned(now);
    now += COORDINATED_MS - 1;
    expect(t.due(1e12)).toBeNull();
    now += 1;
    expect(t.due(1e12)).toEqual({});
  });
});
