import { describe, expect, it } from "vitest";
import type { WorkerStatus } from "../../protocol/ws-frames.js";
import { lagPercentiles, workerHealth } from "./health.js";

function worker(
  partitions: Array<[number, number | null, boolean]>,
  heldBackBy: number | null,
  stale = false,
): WorkerStatus {
  return {
    worker: "w0",
    wallTime: 0,
    logTime: 100_000,
    pipelineLagMs: 10,
    partitions: partitions.map(([partition, logTime, idle]) => ({ partition, logTime, idle, lastSeq: 1 })),
    heldBackBy,
    policies: [],
    openWindows: 0,
    stateKeys: 0,
    stateBytes: 0,
    checkpointAgeMs: null,
    eventsTotal: 0,
    receivedAt: 90_000,
    stale,
  };
}

describe("workerHealth", () => {
  it("flags a partition 5 s or more behind the newest as stalled and names it, idle ones aside", () => {
    const h = workerHealth(
      worker(
        [
          [0, 100_000, false],
          [1, 58_000, false],
          [2, 10_000, true],
        ],
        1,
      ),
      91_000,
    );
    expect(h.partitions.map((p) => [p.partition, p.behindMs, p.stalled, p.idle, p.holds])).toEqual([
      [0, 0, false, false, false],
      [1, 42_000, true, false, true],
      [2, 90_000, false, true, false],
    ]);
    expect(h.alarm).toBe("Watermark stalled: partition 1 is 42 s behind and holds it back");
  });

  it("flags an idle partition behind as stalled when the engine's merge waits for it (heldBackBy)", () => {
    const h = workerHealth(
      worker(
        [
          [0, 100_000, false],
          [1, 80_000, true],
        ],
        1,
      ),
      91_000,
    );
    expect(h.partitions.map((p) => [p.partition, p.stalled, p.holds])).toEqual([
      [0, false, false],
      [1, true, true],
    ]);
    expect(h.alarm).toBe("Watermark stalled: partition 1 is 20 s behind and holds it back");
  });

  it("is quiet below the threshold, and says when the worker stopped reporting (on the server's clock)", () => {
    expect(
      workerHealth(
        worker(
          [
            [0, 100_000, false],
            [1, 96_000, false],
          ],
          1,
        ),
        91_000,
      ).alarm,
    ).toBeNull();
    expect(workerHealth(worker([[0, 100_000, false]], null, true), 102_000).alarm).toBe(
      "Engine w0 has not reported for 12 s",
    );
  });
});

describe("lagPercentiles", () => {
  it("reads pipeline-lag p50/p99 when the engine reports them, and nothing from engines that do not", () => {
    const w = worker([], null);
    expect(lagPercentiles(w)).toBeNull();
    expect(lagPercentiles({ ...w, pipelineLag: { p50: 35, p99: 420 } } as WorkerStatus)).toEqual({ p50: 35, p99: 420 });
    expect(lagPercentiles({ ...w, pipelineLag: { p50: 35 } } as WorkerStatus)).toEqual({ p50: 35, p99: null });
    expect(lagPercentiles({ ...w, pipelineLag: "fast" } as unknown as WorkerStatus)).toBeNull();
  });

  it("names the worker holding a merge operator back, not a stalled partition of its own", () => {
    const w: WorkerStatus = {
      ...worker(
        [
          [0, 100_000, false],
          [5, 97_000, false],
        ],
        5,
      ),
      worker: "merge-0",
      merge: {
        heldBackByWorker: "engine-4-7",
        waitingTicks: 30,
        batches: { accepted: 10, duplicate: 0, overlap: 0, malformed: 0 },
      },
    };
    expect(workerHealth(w, 91_000).alarm).toBe(
      "Merge stage held back by worker engine-4-7: its partition 5 is 3 s behind",
    );
    expect(workerHealth({ ...w, heldBackBy: null }, 91_000).alarm).toBeNull();
  });
});
