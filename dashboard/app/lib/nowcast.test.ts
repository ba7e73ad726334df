import { describe, expect, it } from "vitest";
import type { Pane, PaneNowcast } from "@tidemark/engine/protocol";
import { testPane } from "../../protocol/pane.fixture.js";
import { metricDef } from "./metrics.js";
import { formatNowcastError, nowcastOf } from "./nowcast.js";

const M = "\u2212";
const nowcast = (count: number, errorRate: number, over: Partial<PaneNowcast> = {}): PaneNowcast => ({
  value: { count, errorRate, p99: 450, users: 90 },
  spread: { count: 20, errorRate: 0.002, p99: 30, users: 5 },
  error: { countPct: 0.5, errorRatePp: -0.1, p99Pct: 2, usersPct: null, windows: 12 },
  ...over,
});
const pane = (service: string, count: number, n?: PaneNowcast, kind: Pane["kind"] = "early"): Pane =>
  testPane({ service, count, kind, emittedAt: 5000, ...(n ? { nowcast: n } : {}) });

describe("nowcast of a panel's newest window", () => {
  it("corrects an early pane's rate over the whole window, not the part elapsed", () => {
    // 600 requests 5 s into a 10 s window; nowcast 1300 for the window: 130 req/s ± 2.
    const n = nowcastOf(metricDef("requests"), [pane("api", 600, nowcast(1300, 0.04))]);
    expect(n).toEqual({ value: 130, spread: 2, error: { value: 0.5, unit: "%", spread: null, windows: 12 } });
  });

  it("gives the error rate in % with its interval and the measured error in pp", () => {
    const n = nowcastOf(metricDef("errorRate"), [pane("api", 600, nowcast(1300, 0.043))]);
    expect(n?.value).toBeCloseTo(4.3, 10);
    expect(n?.spread).toBeCloseTo(0.2, 10);
    expect(formatNowcastError(n?.error ?? null)).toBe(`nowcast error ${M}0.1 pp, 12 win.`);
  });

  it("pools services like the values: sums with summed intervals, error rate weighted by corrected counts", () => {
    const panes = [pane("api", 600, nowcast(1000, 0.01)), pane("web", 300, nowcast(3000, 0.05))];
    expect(nowcastOf(metricDef("requests"), panes)).toMatchObject({ value: 400, spread: 4 });
    // (1·1000 + 5·3000) / 4000 = 4 %.
    expect(nowcastOf(metricDef("errorRate"), panes)?.value).toBeCloseTo(4, 10);
    expect(nowcastOf(metricDef("p99"), panes)).toMatchObject({ value: 450, spread: 30 });
  });

  it("shows no nowcast when a pane has none, or the metric has none", () => {
    expect(nowcastOf(metricDef("requests"), [pane("api", 600, nowcast(1000, 0.01)), pane("web", 300)])).toBeNull();
    expect(nowcastOf(metricDef("p50"), [pane("api", 600, nowcast(1000, 0.01))])).toBeNull();
  });

  it("shows the measured error's interval when the engine sends one, and says when it is not measured", () => {
    const withSpread = nowcast(1000, 0.01, {
      error: { countPct: 0.5, errorRatePp: -0.1, p99Pct: 2, usersPct: null, windows: 12, spread: { errorRatePp: 0.2 } },
    } as Partial<PaneNowcast>);
    const n = nowcastOf(metricDef("errorRate"), [pane("api", 600, withSpread)]);
    expect(formatNowcastError(n?.error ?? null)).toBe(`nowcast error ${M}0.1 \u00b1 0.2 pp, 12 win.`);
    const fresh = nowcast(1000, 0.01, {
      error: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 },
    });
    expect(formatNowcastError(nowcastOf(metricDef("errorRate"), [pane("api", 600, fresh)])?.error ?? null)).toBe(
      "nowcast error not measured yet",
    );
  });
});
