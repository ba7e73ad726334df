import { describe, expect, it } from "vitest";
import { AGE_BUCKETS, ageBucketOf } from "../../protocol.js";
import { SLOT_FINAL, SLOT_LATE, SLOT_ON_TIME, SLOTS, slotFromV6, slotOf, V6_SLOTS } from "./kind-slot.js";

const S = 1_767_225_600_000;
const E = S + 10_000;

describe('age buckets (docs/semantics.md, "Measured bias")', () => {
  it("are quarters of the window before its end and early intervals after it, the last open", () => {
    const at = (ms: number, every = 5_000): string => ageBucketOf(S, E, ms, every);
    expect([S, S + 2_499, S + 2_500, S + 5_000, S + 7_500, E - 1].map((t) => at(t))).toEqual([
      "0-0.25",
      "0-0.25",
      "0.25-0.5",
      "0.5-0.75",
      "0.75-1",
      "0.75-1",
    ]);
    expect([E, E + 4_999, E + 5_000, E + 10_000, E + 15_000, E + 600_000].map((t) => at(t))).toEqual([
      "1+0",
      "1+0",
      "1+1",
      "1+2",
      "1+3+",
      "1+3+",
    ]);
    expect([E, E + 999, E + 1_000, E + 1_999].map((t) => at(t, 1_000))).toEqual(["1+0", "1+0", "1+1", "1+1"]);
  });

  it("give each early bucket a slot before on-time, late and final; version-6 slots map onto them", () => {
    expect(AGE_BUCKETS.map((_, i) => i)).toEqual([...Array(SLOT_ON_TIME).keys()]);
    expect([SLOT_ON_TIME, SLOT_LATE, SLOT_FINAL, SLOTS]).toEqual([8, 9, 10, 11]);
    expect(slotOf("early", S, E, E + 5_000, 5_000)).toBe(AGE_BUCKETS.indexOf("1+1"));
    expect(slotOf("on-time", S, E, E + 5_000, 5_000)).toBe(SLOT_ON_TIME);
    // Version 6: "0-0.25" … "0.75-1", "1+", on-time, late, final.
    expect(V6_SLOTS).toEqual([0, 1, 2, 3, -1, SLOT_ON_TIME, SLOT_LATE, SLOT_FINAL]);
    expect([-1, 2, 4, 5, 7].map(slotFromV6)).toEqual([-1, 2, AGE_BUCKETS.indexOf("1+0"), SLOT_ON_TIME, SLOT_FINAL]);
  });
});
