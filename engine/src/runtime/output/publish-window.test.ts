import { describe, expect, it } from "vitest";
import { bodyBytes, PublishWindow } from "./publish-window.js";

describe("PublishWindow", () => {
  it("admits while under its bounds, one body over the byte bound only into an empty window", () => {
    const w = new PublishWindow({ messages: 3, bytes: 100 });
    expect(w.admits(60)).toBe(true);
    w.add(60);
    expect([w.admits(40), w.admits(41)]).toEqual([true, false]);
    w.add(40);
    expect([w.full, w.roomy]).toEqual([true, false]);
    w.remove(60);
    w.remove(40);
    expect([w.admits(500), w.full, w.roomy]).toEqual([true, false, true]);
    w.add(500);
    expect([w.admits(1), w.full, w.peakBytes]).toEqual([false, true, 500]);
    w.remove(500);
    for (let i = 0; i < 3; i++) w.add(1);
    expect([w.admits(1), w.count(), w.peakMessages]).toEqual([false, { messages: 3, bytes: 3 }, 3]);
  });

  it("is roomy only under half of both bounds", () => {
    const w = new PublishWindow({ messages: 4, bytes: 100 });
    w.add(10);
    w.add(10);
    expect(w.roomy).toBe(false); // 2 of 4 messages
    w.remove(10);
    expect(w.roomy).toBe(true);
    w.add(45);
    expect(w.roomy).toBe(false); // 55 of 100 bytes
  });

  it("counts the bytes a body holds: UTF-8 of text, a byte body's whole buffer when it starts it", () => {
    expect(bodyBytes("é€x")).toBe(6);
    expect(bodyBytes(new Uint8Array(10))).toBe(10);
    const buffer = new Uint8Array(4096);
    expect(bodyBytes(buffer.subarray(0, 1024))).toBe(4096);
    expect(bodyBytes(buffer.subarray(8, 1024))).toBe(1016);
  });
});
