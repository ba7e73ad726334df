import { describe, expect, it } from "vitest";
import { RETRY_AFTER_CAP_MS, classifyStatus, retryAfterMs, retryDelayMs } from "./retry-policy.js";

describe("classifyStatus", () => {
  it.each([
    [200, "accepted"],
    [202, "accepted"],
    [429, "retry"],
    [503, "retry"],
    [500, "retry"],
    [502, "retry"],
    [504, "retry"],
    [400, "refused"],
    [413, "refused"],
    [422, "refused"],
    [401, "fatal"],
    [403, "fatal"],
    [404, "fatal"],
    [405, "fatal"],
    [415, "fatal"],
    [301, "fatal"],
    [101, "fatal"],
  ] as const)("%d → %s", (status, verdict) => {
    expect(classifyStatus(status)).toBe(verdict);
  });
});

describe("retryDelayMs", () => {
  it("backs off exponentially from 200 ms to a 5 s cap, with equal jitter", () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((a) => retryDelayMs(a, undefined, 0.999999))).toEqual([
      200, 400, 800, 1600, 3200, 5000, 5000,
    ]);
    expect([1, 2, 3, 10].map((a) => retryDelayMs(a, undefined, 0))).toEqual([100, 200, 400, 2500]);
  });

  it("never waits less than Retry-After, capped at 10 s", () => {
    expect(retryDelayMs(1, "1", 0.5)).toBe(1000);
    expect(retryDelayMs(1, "0", 0.5)).toBe(150);
    expect(retryDelayMs(6, "2", 0.5)).toBe(3750);
    expect(retryDelayMs(1, "3600", 0.5)).toBe(RETRY_AFTER_CAP_MS);
  });

  it("reads Retry-After in seconds and ignores what it cannot read", () => {
    expect(retryAfterMs("1.5")).toBe(1500);
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs("")).toBeUndefined();
    expect(retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT")).toBeUndefined();
    expect(retryAfterMs("-1")).toBeUndefined();
  });
});
