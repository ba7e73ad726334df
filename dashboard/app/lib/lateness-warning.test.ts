import { describe, expect, it } from "vitest";
import type { FrontierPoint } from "../../protocol/ws-frames.js";
import { testBias, testDial, testLateness } from "../../protocol/status.fixture.js";
import { latenessWarnings } from "./lateness-warning.js";

const flagged = testLateness({ onTimeErrors: 100, lateEvents: 300, lateErrors: 27, ratio: 9, p: 1e-20, flagged: true });
const point = (services: FrontierPoint["services"]): FrontierPoint => ({
  policy: "dashboard",
  label: "dashboard",
  strategy: "",
  graceMs: 0,
  emitDelayMs: 2000,
  pipelineLagMs: 40,
  bias: testBias(-0.33),
  source: "status",
  stages: [],
  services,
});

describe("correlated-lateness warnings", () => {
  it("names the service, how much more often its late requests fail, and the direction and size of the bias", () => {
    const p = point([
      testDial("checkout", 10_000, testBias(-1.4), testBias(-1.4), flagged),
      testDial("checkout", 60_000, testBias(-1.2), testBias(-1.2), flagged),
      testDial("search", 10_000, testBias(0.03), testBias(0.03)),
    ]);
    expect(latenessWarnings(p, ["checkout", "search"], 10_000)).toEqual([
      "late requests of checkout fail 9\u00d7 more often: dashboard under-reports its error rate by \u2248 1.4 pp",
    ]);
    expect(latenessWarnings(p, ["checkout"], 60_000)[0]).toMatch(/by \u2248 1\.2 pp$/);
    expect(latenessWarnings(p, ["search"], 10_000)).toEqual([]);
    expect(latenessWarnings(undefined, ["checkout"], 10_000)).toEqual([]);
  });

  it("says over-reports, less often, provisional and unmeasured as they are", () => {
    const less = testLateness({ ratio: 0.25, flagged: true });
    expect(
      latenessWarnings(
        point([testDial("a", 10_000, testBias(0.8, 3, { provisional: true }), testBias(0), less)]),
        ["a"],
        10_000,
      ),
    ).toEqual([
      "late requests of a fail 4\u00d7 less often: dashboard over-reports its error rate by \u2248 0.8 pp so far (provisional)",
    ]);
    const neverOnTime = testLateness({ onTimeErrors: 0, lateEvents: 200, lateErrors: 9, ratio: null, flagged: true });
    expect(
      latenessWarnings(
        point([testDial("b", 10_000, testBias(null, 0), testBias(null, 0), neverOnTime)]),
        ["b"],
        10_000,
      ),
    ).toEqual([
      "late requests of b fail 4.5 % of the time, on-time ones never: dashboard's error-rate bias for it is not measured yet",
    ]);
  });

  it("names at most three flagged services on a panel and counts the rest", () => {
    const p = point(["a", "b", "c", "d", "e"].map((s) => testDial(s, 10_000, testBias(-1), testBias(-1), flagged)));
    const w = latenessWarnings(p, ["a", "b", "c", "d", "e"], 10_000);
    expect(w.length).toBe(4);
    expect(w[3]).toBe("and 2 more services with correlated lateness");
  });
});
