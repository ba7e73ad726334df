import { describe, expect, it } from "vitest";
import { LatencyBias, SAMPLES, kindAgeOf } from "./latency-bias.js";
import { slopane, T0, W } from "./slo-pane.fixture.js";

describe("the latency ratio's measured bias", () => {
  it("is kept per pane kind and the engine's age bucket of the pane", () => {
    const early = slopane(0, "early", { count: 1, errors: 0 });
    expect(kindAgeOf(early)).toBe("early:0.5");
    expect(kindAgeOf({ ...early, bias: { ...early.bias, age: "0.75-1" } })).toBe("early:0.75-1");
    expect(kindAgeOf(slopane(0, "early", { count: 1, errors: 0 }, { emittedAt: T0 + W + 500 }))).toBe("early:1+");
    expect(kindAgeOf(slopane(0, "on-time", { count: 1, errors: 0 }))).toBe("on-time");
  });

  it("is the mean of the last 30 settled differences with a Student-t half-width", () => {
    const b = new LatencyBias();
    const diffs: number[] = [];
    for (let i = 0; i < 45; i++) {
      const shown = 0.05 + 0.001 * (i % 7);
      b.saw(T0 + i * W, "on-time", shown, false);
      b.saw(T0 + i * W, "final", 0.08, true);
      diffs.push(100 * (shown - 0.08));
    }
    const last = diffs.slice(-SAMPLES);
    const mean = last.reduce((a, x) => a + x, 0) / SAMPLES;
    const sd = Math.sqrt(last.reduce((a, x) => a + (x - mean) ** 2, 0) / (SAMPLES - 1));
    const got = b.at("on-time");
    expect(got.windows).toBe(SAMPLES);
    expect(got.meanPp).toBeCloseTo(mean, 12);
    // t(0.975, 29) = 2.0452 (standard tables).
    expect(got.spreadPp).toBeCloseTo((2.0452 * sd) / Math.sqrt(SAMPLES), 3);
    expect(b.at("early:0.5")).toEqual({ meanPp: null, spreadPp: null, windows: 0 });
  });
});
