import { describe, expect, it } from "vitest";
import { biasText, budgetText, correctedText, objectiveText, sig, timeText } from "./slo-text.js";

const w = { window: "5m", requests: 1000, raw: 10, corrected: 20.04567, halfWidth: 1.99999, biasPp: -1 };
const budget = {
  remaining: -0.4917,
  remainingRaw: 0.1,
  halfWidth: 0.0123,
  from: null,
  to: null,
  countedFrom: null,
  exhaustionMs: 0,
  exhaustion: "0s (budget spent)",
};

describe("the SLO panel's texts", () => {
  it("writes four significant digits, intervals and signs", () => {
    expect([sig(14.4), sig(0.28333333), sig(-15.8712), sig(Infinity)]).toEqual(["14.4", "0.2833", "-15.87", "–"]);
    expect(correctedText(w)).toBe("20.05× ± 2");
    expect(correctedText({ ...w, halfWidth: null })).toBe("20.05× (provisional)");
    expect([biasText(w), biasText({ ...w, biasPp: 0.5 }), biasText({ ...w, biasPp: null })]).toEqual([
      "-1 pp",
      "+0.5 pp",
      "not measured yet",
    ]);
    expect(budgetText(budget)).toBe("-49.17 % ± 1.23");
    expect(budgetText({ ...budget, halfWidth: null })).toBe("-49.17 %");
    expect(objectiveText(0.999)).toBe("99.9 %");
    expect([timeText(Date.UTC(2026, 0, 1, 10, 5)), timeText(null)]).toEqual(["2026-01-01 10:05Z", "–"]);
  });
});
