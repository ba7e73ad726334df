import { describe, expect, it } from "vitest";
import { parseReadyLine, readyLine } from "./ready-line.js";

describe("ready line", () => {
  it("round-trips the JSON and ignores other lines", () => {
    const line = readyLine({ nats: "nats://127.0.0.1:4222" });
    expect(line.startsWith("tidemark ready {")).toBe(true);
    expect(parseReadyLine(line)).toEqual({ nats: "nats://127.0.0.1:4222" });
    expect(parseReadyLine("tidemark up: started")).toBeUndefined();
  });
});
