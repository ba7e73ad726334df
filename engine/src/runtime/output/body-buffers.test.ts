import { describe, expect, it } from "vitest";
import { BodyBuffers } from "./body-buffers.js";

describe("BodyBuffers", () => {
  it("hands out a buffer given back when one is large enough, else a new one of at least 64 KiB", () => {
    const b = new BodyBuffers();
    const first = b.take(10);
    expect(first.byteLength).toBe(64 * 1024);
    const big = b.take(200_000);
    expect(big.byteLength).toBe(200_000);
    b.give(first.buffer as ArrayBuffer);
    b.give(big.buffer as ArrayBuffer);
    expect(b.size).toBe(2);
    expect(b.take(100_000).buffer).toBe(big.buffer);
    expect(b.take(300_000).byteLength).toBe(300_000); // none fits: new
    expect(b.take(1).buffer).toBe(first.buffer);
    expect(b.size).toBe(0);
  });

  it("keeps no detached or short buffer and at most 32 MiB of idle ones", () => {
    const b = new BodyBuffers();
    b.give(new ArrayBuffer(0));
    b.give(new ArrayBuffer(2000)); // a short body's own copy (JsonLines.take)
    expect(b.size).toBe(0);
    for (let i = 0; i < 40; i++) b.give(new ArrayBuffer(1024 * 1024));
    expect(b.size).toBe(32);
  });
});
