import { describe, expect, it } from "vitest";
import type { EngineStatusMessage, PolicyStatusWire } from "@tidemark/engine/protocol";
import { testPane } from "../protocol/pane.fixture.js";
import { frontier } from "./status-board.js";

const policy = (
  name: string,
  emitDelayMs: number,
  errorRatePp: number,
  windows: number,
  usersPct: number | null = null,
): PolicyStatusWire => ({
  name,
  label: `${name} label`,
  strategy: "arrival-lag 2s",
  graceMs: 0,
  mode: "accumulating",
  watermark: 0,
  lateAccepted: 0,
  dropped: 0,
  bias: { countPct: 4, errorRatePp, p99Pct: null, usersPct, windows },
  emitDelayMs,
});
const worker = (id: string, lag: number, policies: PolicyStatusWire[]): EngineStatusMessage => ({
  worker: id,
  wallTime: 0,
  logTime: 0,
  pipelineLagMs: lag,
  partitions: [],
  heldBackBy: null,
  policies,
  openWindows: 0,
  stateKeys: 0,
  stateBytes: 0,
  checkpointAgeMs: null,
  eventsTotal: 0,
});

describe("frontier", () => {
  it("merges workers per policy: largest delay and lag, bias weighted by windows; panes fill in unreported policies", () => {
    const points = frontier(
      [
        worker("a", 30, [policy("dashboard", 2000, -1, 30, 4)]),
        worker("b", 80, [policy("dashboard", 2100, -2, 10, 8)]),
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
      },
    ]);
  });
});
