import { describe, expect, it } from "vitest";
import { DurationError, formatDuration, parseDuration } from "./duration.js";

describe("parseDuration", () => {
  it("reads every unit the design names", () => {
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("10s")).toBe(10_000);
    expect(parseDuration("1m")).toBe(60_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    expect(parseDuration("1.5s")).toBe(1500);
    expect(parseDuration("250")).toBe(250);
  });
  it("rejects what is not a duration, naming the input and the form", () => {
    for (const bad of ["", "ten seconds", "-1s", "1 fortnight", "s"]) {
      expect(() => parseDuration(bad)).toThrow(DurationError);
    }
    expect(() => parseDuration("5x")).toThrow(/"5x" is not a duration: .*10s/);
  });
  it("formats back to the largest exact unit", () => {
    expect(formatDuration(60_000)).toBe("1m");
    expect(formatDuration(90_000)).toBe("90s");
    expect(formatDuration(1500)).toBe("1500ms");
    expect(parseDuration(formatDuration(7_200_000))).toBe(7_200_000);
  });
});
