import { describe, expect, it } from "vitest";
import { IdempotencyKeys } from "./idempotency-keys.js";

describe("idempotency keys", () => {
  it("accepts a key again with its own body, refuses another body, per token, within the window", () => {
    const keys = new IdempotencyKeys(120_000, 10);
    expect(keys.claim("tokA", "k", "h1", 0)).toBe(true);
    expect(keys.claim("tokA", "k", "h1", 1000)).toBe(true);
    expect(keys.claim("tokA", "k", "h2", 2000)).toBe(false);
    expect(keys.claim("tokB", "k", "h2", 2000)).toBe(true);
    // Past the window the key is free again (JetStream no longer deduplicates it either).
    expect(keys.claim("tokA", "k", "h2", 120_000)).toBe(true);
  });

  it("holds at most maxKeys, forgetting the oldest first and counting each", () => {
    let evicted = 0;
    const keys = new IdempotencyKeys(120_000, 3, () => evicted++);
    for (let i = 0; i < 5; i++) expect(keys.claim("t", `k${i}`, "h", i)).toBe(true);
    expect(keys.size).toBe(3);
    expect(evicted).toBe(2);
    // k0 was forgotten: another body is accepted (stored under its own message id), k4 is held.
    expect(keys.claim("t", "k0", "other", 10)).toBe(true);
    expect(keys.claim("t", "k4", "other", 10)).toBe(false);
  });
});
