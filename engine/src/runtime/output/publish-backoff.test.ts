import { describe, expect, it } from "vitest";
import { ackTimeoutMs, PUBLISH_BACKOFF } from "./publish-backoff.js";

describe("ackTimeoutMs", () => {
  it("doubles per attempt between its fixed half and its bound, capped at 30 s", () => {
    const low = [0, 1, 2, 3, 4, 5, 9, 60].map((k) => ackTimeoutMs(k, PUBLISH_BACKOFF, () => 0));
    const high = [0, 1, 2, 3, 4, 5, 9, 60].map((k) => ackTimeoutMs(k, PUBLISH_BACKOFF, () => 1));
    expect(low).toEqual([1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000, 15_000]);
    expect(high).toEqual([2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it("spreads publishes sent together: the random half decides where in [bound/2, bound] each falls", () => {
    const draws = [0.1, 0.5, 0.9];
    expect(draws.map((r) => ackTimeoutMs(2, PUBLISH_BACKOFF, () => r))).toEqual([4_400, 6_000, 7_600]);
    expect(ackTimeoutMs(0, { firstMs: 10, capMs: 15 }, () => 0.5)).toBe(11.25); // the cap binds from the first attempt
    expect(ackTimeoutMs(3, { firstMs: 10, capMs: 15 }, () => 0)).toBe(7.5);
  });
});
