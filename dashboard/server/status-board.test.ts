import { describe, expect, it } from "vitest";
import { testPane } from "../protocol/pane.fixture.js";
import {
  testBias,
  testDial,
  testLateness,
  testPolicyStatus,
  testKindBias,
  testWorker,
} from "../protocol/status.fixture.js";
import { frontier, StatusBoard } from "./status-board.js";

const policy = (name: string, emitDelayMs: number, errorRatePp: number, windows: number, usersPct: number | null) =>
  testPolicyStatus(name, {
    bias: { countPct: 4, errorRatePp, p99Pct: null, usersPct, windows },
    emitDelayMs,
  });

describe("frontier", () => {
  it("pools workers per policy: largest delay and lag, bias weighted by windows; panes fill in unreported policies", () => {
    const points = frontier(
      [
        testWorker("a", 30, [policy("dashboard", 2000, -1, 30, 4)]),
        testWorker("b", 80, [policy("dashboard", 2100, -2, 10, 8)]),
      ],
      new Map([
        [
          "billing",
          testPane({
            policy: "billing",
            kind: "final",
            emitDelayMs: 100_000,
            pipelineLagMs: 50,
            bias: { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 12 },
          }),
        ],
      ]),
    );
    expect(points).toEqual([
      {
        policy: "dashboard",
        label: "dashboard label",
        strategy: "arrival-lag 2s",
        graceMs: 0,
        emitDelayMs: 2100,
        pipelineLagMs: 80,
        bias: { countPct: 4, errorRatePp: -1.25, p99Pct: null, usersPct: 5, windows: 30 },
        source: "status",
        stages: [],
        services: [],
      },
      {
        policy: "billing",
        label: "billing",
        strategy: "",
        graceMs: null,
        emitDelayMs: 100_000,
        pipelineLagMs: 50,
        bias: { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 12 },
        source: "panes",
        stages: [],
        services: [],
      },
    ]);
  });

  it("leaves a merge operator's status out of the pooled dial: its all-services key is no worker's", () => {
    const merge = {
      ...testWorker("merge-0", 500, [policy("dashboard", 9000, -9, 90, 40)]),
      merge: {
        heldBackByWorker: null,
        waitingTicks: 0,
        batches: { accepted: 1, duplicate: 0, overlap: 0, malformed: 0 },
      },
    };
    const [alone] = frontier([testWorker("a", 30, [policy("dashboard", 2000, -1, 30, 4)])], new Map());
    const [withMerge] = frontier([testWorker("a", 30, [policy("dashboard", 2000, -1, 30, 4)]), merge], new Map());
    expect(withMerge).toEqual(alone);
    expect(withMerge?.bias.windows).toBe(30);
  });

  it("pools the kind (stages) and service dials over workers: biases by windows, the larger delay, the lateness over more events", () => {
    const flagged = testLateness({ onTimeEvents: 9000, lateEvents: 400, ratio: 9, flagged: true, p: 1e-9 });
    const points = frontier(
      [
        testWorker("a", 30, [
          testPolicyStatus("alerting", {
            stages: [
              testKindBias(10_000, "on-time", 10_000, testBias(-0.4, 30)),
              testKindBias(10_000, "final", 40_000, testBias(0, 30)),
            ],
            services: [testDial("checkout", 10_000, testBias(-1.4, 30), testBias(-0.1, 30), flagged)],
          }),
        ]),
        testWorker("b", 80, [
          testPolicyStatus("alerting", {
            stages: [
              testKindBias(
                10_000,
                "on-time",
                11_000,
                testBias(-0.8, 10, { spread: { countPct: 1, errorRatePp: 0.7, p99Pct: null, usersPct: 0.4 } }),
              ),
            ],
            services: [
              testDial("checkout", 10_000, testBias(-1, 10), testBias(0.3, 10), testLateness({ onTimeEvents: 50 })),
              testDial("search", 10_000, testBias(0.1, 5), testBias(0, 5)),
            ],
          }),
        ]),
      ],
      new Map(),
    );
    const [alerting] = points;
    expect(alerting?.stages.map((s) => [s.stage, s.emitDelayMs, s.bias.errorRatePp, s.bias.spread])).toEqual([
      // (−0.4·30 − 0.8·10) / 40 = −0.5; spreads weighted alike: (0.3·30 + 0.7·10) / 40 = 0.4; p99's unknown on one side.
      ["on-time", 11_000, -0.5, { countPct: 0.625, errorRatePp: 0.4, p99Pct: null, usersPct: 0.4 }],
      ["final", 40_000, 0, { countPct: 0.5, errorRatePp: 0.3, p99Pct: 1, usersPct: 0.4 }],
    ]);
    expect(alerting?.services.map((d) => [d.service, d.onTime.errorRatePp, d.final.errorRatePp, d.lateness])).toEqual([
      ["checkout", -1.3, 0, flagged],
      ["search", 0.1, 0, testLateness()],
    ]);
  });
});

describe("StatusBoard", () => {
  it("sends the stage and service dials once, in the frontier, not again in each worker's policies", () => {
    const board = new StatusBoard();
    board.update(
      testWorker("a", 30, [
        testPolicyStatus("dashboard", {
          stages: [testKindBias(10_000, "final", 3000, testBias(-0.3))],
          services: [testDial("checkout", 10_000, testBias(-1.4), testBias(-1.4))],
        }),
      ]),
      1000,
    );
    const view = board.view(
      2000,
      { state: "live", applied: 0, replayTarget: null, lastSeq: 0, error: null },
      new Map(),
    );
    expect(view.workers[0]?.policies[0]).toEqual(testPolicyStatus("dashboard"));
    expect(view.frontier[0]?.stages.length).toBe(1);
    expect(view.frontier[0]?.services.map((d) => d.service)).toEqual(["checkout"]);
  });

  it("keys each operator by operatorId, and by worker for engines that send only that (ADR 0045)", () => {
    const board = new StatusBoard();
    const feed = { state: "live" as const, applied: 0, replayTarget: null, lastSeq: 0, error: null };
    board.update({ ...testWorker("engine-0-7", 30, []), operatorId: "engine-0-7" }, 1000);
    board.update(testWorker("engine-a", 40, []), 1000);
    board.update({ ...testWorker("merge-0", 50, []), operatorId: "merge-0" }, 1000);
    // A newer message of engine-a, now with operatorId: it replaces the older one.
    board.update({ ...testWorker("engine-a", 45, []), operatorId: "engine-a" }, 1500);
    const view = board.view(2000, feed, new Map());
    expect(view.workers.map((w) => [w.operatorId ?? w.worker, w.pipelineLagMs])).toEqual([
      ["engine-0-7", 30],
      ["engine-a", 45],
      ["merge-0", 50],
    ]);
  });
});
