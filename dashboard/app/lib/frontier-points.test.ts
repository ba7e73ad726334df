import { describe, expect, it } from "vitest";
import type { FrontierPoint } from "../../protocol/ws-frames.js";
import { testBias, testDial, testKindBias } from "../../protocol/status.fixture.js";
import { frontierView } from "./frontier-points.js";

const point = (policy: string, over: Partial<FrontierPoint>): FrontierPoint => ({
  policy,
  label: `${policy} label`,
  strategy: "",
  graceMs: 0,
  emitDelayMs: 2000,
  pipelineLagMs: 40,
  bias: testBias(-0.33),
  source: "status",
  stages: [],
  services: [],
  ...over,
});
const alerting = point("alerting", {
  emitDelayMs: 10_000,
  stages: [
    testKindBias(10_000, "early", -5000, testBias(-3)),
    testKindBias(10_000, "on-time", 10_000, testBias(-0.4)),
    testKindBias(10_000, "final", 40_000, testBias(-0.02)),
    testKindBias(60_000, "final", 40_000, testBias(-0.01)),
  ],
  services: [
    testDial("checkout", 10_000, testBias(-1.4), testBias(-0.1)),
    testDial("search", 10_000, testBias(-0.2, 10), testBias(0.1, 10)),
  ],
});
const billing = point("billing", {
  emitDelayMs: 100_000,
  stages: [testKindBias(10_000, "final", 100_000, testBias(0))],
  services: [testDial("checkout", 10_000, testBias(0), testBias(0))],
});
const coords = (v: ReturnType<typeof frontierView>) =>
  v.policies.map((p) => [p.policy, p.points.map((x) => [x.kind, x.delayMs, x.bias.errorRatePp])]);

describe("frontier points", () => {
  it("places one point per (policy, pane kind) of the window size, on-time and final at their own delays and biases", () => {
    expect(coords(frontierView([alerting, billing], 10_000, []))).toEqual([
      [
        "alerting",
        [
          ["on-time", 10_040, -0.4],
          ["final", 40_040, -0.02],
        ],
      ],
      ["billing", [["final", 100_040, 0]]],
    ]);
  });

  it("keeps one point per policy for older engines without per-kind biases (stages)", () => {
    expect(coords(frontierView([point("dashboard", {})], 10_000, []))).toEqual([["dashboard", [[null, 2040, -0.33]]]]);
  });

  it("draws the selected services' own dials at the pooled kinds' delays, pooled by windows", () => {
    const v = frontierView([alerting, billing, point("dashboard", {})], 10_000, ["checkout", "search"]);
    // on-time (−1.4·30 − 0.2·10) / 40 = −1.1; final (−0.1·30 + 0.1·10) / 40 = −0.05.
    expect(coords(v)).toEqual([
      [
        "alerting",
        [
          ["on-time", 10_040, -1.1],
          ["final", 40_040, -0.05],
        ],
      ],
      ["billing", [["final", 100_040, 0]]],
    ]);
    expect(v.unmeasured).toEqual(["dashboard"]);
  });
});
