import { describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { testPane } from "../../protocol/pane.fixture.js";
import { testBias } from "../../protocol/status.fixture.js";
import { biasKindOf, headlineFacts, headlineWindow } from "./service-pool.js";
import type { SeriesPoint } from "./pane-book.js";

const W = 10_000;
const series = (...panes: Pane[]): Map<string, SeriesPoint[]> => {
  const m = new Map<string, SeriesPoint[]>();
  for (const p of panes) {
    const s = m.get(p.key.service) ?? [];
    s.push({ t: p.window.start, pane: p });
    m.set(
      p.key.service,
      s.sort((a, b) => a.t - b.t),
    );
  }
  return m;
};
const at = (service: string, start: number, kind: Pane["kind"], bias = testBias(-1)) =>
  testPane({ service, start, kind, bias: { ...bias, stage: biasKindOf(testPane({ kind })) as never } });

describe("pooling services for a headline", () => {
  it("reads the kind a pane's bias is measured at from its bias (bias.stage), or its kind for older engines", () => {
    expect(biasKindOf(testPane({ kind: "late", bias: { ...testBias(0), stage: "final" } }))).toBe("final");
    expect(biasKindOf(testPane({ kind: "late" }))).toBe("late");
  });

  it("pools the newest window when its panes' biases are of one kind", () => {
    const h = headlineWindow(series(at("api", 0, "on-time"), at("api", W, "early"), at("web", W, "early")));
    expect(h).toMatchObject({ t: W, newerMixed: false, leftOut: 0 });
    expect(h?.panes.map((p) => p.key.service)).toEqual(["api", "web"]);
  });

  it("never mixes kinds: a newest window of several kinds gives way to the newest window of one", () => {
    const h = headlineWindow(
      series(at("api", 0, "on-time"), at("web", 0, "on-time"), at("api", W, "late"), at("web", W, "on-time")),
    );
    expect(h).toMatchObject({ t: 0, newerMixed: true, leftOut: 0 });
    expect(h?.panes.map((p) => p.kind)).toEqual(["on-time", "on-time"]);
  });

  it("falls back to the least settled kind's panes of the newest window when no window is of one kind", () => {
    const h = headlineWindow(series(at("api", 0, "late"), at("web", 0, "on-time"), at("db", 0, "on-time")));
    expect(h).toMatchObject({ t: 0, newerMixed: false, leftOut: 1 });
    expect(h?.panes.map((p) => p.key.service)).toEqual(["web", "db"]);
  });

  it("weights the bias and its interval by windows, keeping provisional and policy-wide marks", () => {
    const f = headlineFacts([
      testPane({ service: "api", bias: testBias(-2, 30, { stage: "on-time" }) }),
      testPane({
        service: "web",
        bias: testBias(-1, 10, {
          stage: "on-time",
          scope: "policy",
          spread: { countPct: 0.5, errorRatePp: 0.7, p99Pct: 1, usersPct: 0.4 },
        }),
      }),
    ]);
    // (−2·30 − 1·10) / 40 = −1.75; interval (0.3·30 + 0.7·10) / 40 = 0.4.
    expect(f?.bias).toMatchObject({ errorRatePp: -1.75, windows: 30, stage: "on-time", scope: "policy" });
    expect(f?.bias.spread?.errorRatePp).toBeCloseTo(0.4, 10);
  });
});
