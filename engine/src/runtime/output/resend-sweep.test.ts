import { describe, expect, it } from "vitest";
import { PUBLISH_BACKOFF } from "./publish-backoff.js";
import { sweepDue, type Resendable } from "./resend-sweep.js";

const at = (dueAt: number, bytes = 10, attempt = 0): Resendable => ({ attempt, dueAt, bytes });

describe("sweepDue", () => {
  it("sends again the earliest due first, within the sweep's bound, each with its next attempt and timeout", () => {
    const pending = [at(300), at(100), at(900), at(200, 10, 3), at(150)];
    const { resend, report } = sweepDue(pending, 500, { messages: 3, bytes: 1000 }, PUBLISH_BACKOFF, () => 0);
    expect(resend.map((p) => p.attempt)).toEqual([1, 1, 4]);
    expect(resend.map((p) => p.dueAt)).toEqual([500 + 2_000, 500 + 2_000, 500 + 15_000]);
    expect(report).toEqual({ resent: 3, resentBytes: 30, deferred: 1, maxAttempt: 4, oldestDueMs: 400 });
    // The one left (due at 300) is still due; the one due at 900 is not yet.
    expect(pending.filter((p) => p.dueAt <= 500).map((p) => p.dueAt)).toEqual([300]);
  });

  it("bounds the bytes too, but always sends the first due one however large", () => {
    const pending = [at(1, 5000), at(2, 10), at(3, 10)];
    const { resend, report } = sweepDue(pending, 10, { messages: 64, bytes: 1000 }, PUBLISH_BACKOFF, () => 0);
    expect(resend.map((p) => p.bytes)).toEqual([5000]);
    expect([report.resent, report.deferred]).toEqual([1, 2]);
    expect(sweepDue([], 10, { messages: 64, bytes: 1000 }, PUBLISH_BACKOFF, () => 0).report).toEqual({
      resent: 0,
      resentBytes: 0,
      deferred: 0,
      maxAttempt: 0,
      oldestDueMs: 0,
    });
  });
});
