import { describe, expect, it } from "vitest";
import { matcher } from "../promql/index.js";
import type { Budget, WindowBurn } from "./burn-rate.js";
import { parseSlos, type SloDefinition } from "./slo-config.js";
import { MAX_POINTS, SloSeries } from "./slo-series.js";

const [SLO] = parseSlos([{ name: "s", objective: 0.99 }], { policies: ["alerting"], windowsMs: [10_000] }, "t") as [
  SloDefinition,
];
const burn = (windowMs: number, raw: number): WindowBurn => ({
  windowMs,
  requests: 1,
  raw,
  corrected: raw * 2,
  halfWidth: null,
  biasPp: null,
});
const budget: Budget = { remaining: 0.5, remainingRaw: 0.6, halfWidth: null, exhaustionMs: Infinity };

describe("the SLO series", () => {
  it("holds one sample per window end, replaced when read again, the newest MAX_POINTS kept", () => {
    const s = new SloSeries();
    for (let i = 0; i <= MAX_POINTS; i++) s.record(SLO, i * 10_000, [burn(3_600_000, i)], budget);
    s.record(SLO, MAX_POINTS * 10_000, [burn(3_600_000, -1)], budget);
    const [raw] = s.select([matcher("__name__", "=", "tidemark_slo_burn_rate"), matcher("window", "=", "1h")]);
    expect([raw?.length, raw?.time(0), raw?.value((raw?.length ?? 0) - 1)]).toEqual([MAX_POINTS, 10_000, -1]);
    expect(raw?.labels).toEqual({ __name__: "tidemark_slo_burn_rate", slo: "s", window: "1h" });
    expect(s.seriesIn([matcher("slo", "=", "s")], 0, 5_000)).toEqual([]);
    expect(
      s
        .seriesIn([matcher("slo", "=", "s")], 10_000, 10_000)
        .map((l) => l["__name__"])
        .sort(),
    ).toEqual([
      "tidemark_slo_budget_remaining_ratio",
      "tidemark_slo_burn_rate",
      "tidemark_slo_burn_rate_corrected",
      "tidemark_slo_objective",
    ]);
  });
});
