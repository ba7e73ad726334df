import { describe, expect, it } from "vitest";
import { SettleRule, settleKindOf } from "./settle-rule.js";

describe("settle rule", () => {
  it("is the on-time pane without grace, else the final one; discarding policies are not written", () => {
    expect(settleKindOf({ graceMs: 0, mode: "accumulating" })).toBe("on-time");
    expect(settleKindOf({ graceMs: 30_000, mode: "retracting" })).toBe("final");
    expect(settleKindOf({ graceMs: 0, mode: "final-only" })).toBe("final");
    expect(settleKindOf({ graceMs: 0, mode: "discarding" })).toBeNull();
    const rule = new SettleRule([
      { name: "dashboard", graceMs: 0, mode: "accumulating" },
      { name: "alerting", graceMs: 30_000, mode: "retracting" },
    ]);
    expect(rule.verdict({ policy: "dashboard", kind: "on-time" })).toBe("settled");
    expect(rule.verdict({ policy: "dashboard", kind: "early" })).toBe("unsettled");
    expect(rule.verdict({ policy: "alerting", kind: "on-time" })).toBe("unsettled");
    expect(rule.verdict({ policy: "alerting", kind: "retract" })).toBe("unsettled");
    expect(rule.verdict({ policy: "alerting", kind: "final" })).toBe("settled");
    expect(rule.verdict({ policy: "other", kind: "final" })).toBe("unknown-policy");
  });
});
