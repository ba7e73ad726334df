import { describe, expect, it } from "vitest";
import { IngestError } from "../errors.js";
import { TokenLimits } from "./token-limits.js";

const refused = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof IngestError && err.code === "TM_INGEST_RATE_LIMITED" && err.status === 429) return err.message;
    throw err;
  }
  throw new Error("expected TM_INGEST_RATE_LIMITED");
};

describe("per-token limits", () => {
  it("lets a bucket of one second's worth through, refills at the rate, and keeps tokens apart", () => {
    let now = 0;
    const hits: string[] = [];
    const limits = new TokenLimits(
      4,
      0,
      (l) => hits.push(l),
      () => now,
    );
    for (let i = 0; i < 4; i++) limits.enter("a")();
    expect(refused(() => limits.enter("a"))).toContain("more than 4 requests per second with this token (tokenRate)");
    limits.enter("b")();
    now = 250; // one request's worth refilled
    limits.enter("a")();
    expect(() => limits.enter("a")).toThrow(IngestError);
    expect(hits).toEqual(["rate", "rate"]);
  });

  it("counts requests in flight per token until each is released (once)", () => {
    const hits: string[] = [];
    const limits = new TokenLimits(0, 2, (l) => hits.push(l));
    const first = limits.enter("a");
    limits.enter("a");
    expect(refused(() => limits.enter("a"))).toContain("2 requests of this token are in flight (tokenConcurrency)");
    limits.enter("b");
    first();
    first();
    limits.enter("a");
    expect(() => limits.enter("a")).toThrow(IngestError);
    expect(hits).toEqual(["concurrency", "concurrency"]);
  });
});
