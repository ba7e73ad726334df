import { describe, expect, it } from "vitest";
import { LagTracker } from "./lag-tracker.js";

describe("LagTracker", () => {
  it("reports the worst worker's latest pipeline lag and the largest p99 seen", () => {
    const t = new LagTracker();
    expect(t.worst()).toBeUndefined();
    t.observe({ worker: "engine-0-3", pipelineLag: { p50: 20, p99: 900 } });
    t.observe({ worker: "engine-4-7", pipelineLag: { p50: 30, p99: 300 } });
    t.observe({ worker: "merge-0", pipelineLag: { p50: 40, p99: 450 } });
    t.observe({ worker: "engine-0-3", pipelineLag: { p50: 10, p99: 120 } });
    expect(t.worst()).toEqual({ worker: "merge-0", p50: 40, p99: 450 });
    expect(t.maxP99).toBe(900);
    expect(t.workers).toBe(3);
    expect(t.seen).toBe(4);
  });

  it("ignores status from engines without a pipeline lag, and keeps a null p99 below any number", () => {
    const t = new LagTracker();
    t.observe({ worker: "old-engine" });
    expect(t.seen).toBe(0);
    t.observe({ worker: "a", pipelineLag: { p50: null, p99: null } });
    t.observe({ worker: "b", pipelineLag: { p50: 1, p99: 2 } });
    expect(t.worst()?.worker).toBe("b");
    expect(t.maxP99).toBe(2);
  });
});
