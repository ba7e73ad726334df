import { describe, expect, it } from "vitest";
import { formatBias, formatDuration, formatEmitDelay, formatSigned, formatValue } from "./format.js";

const M = "\u2212";

describe("formatting values, bias and delay", () => {
  it("gives values three significant digits and their unit", () => {
    expect(formatValue("req/s", 123.4)).toBe("123 req/s");
    expect(formatValue("req/s", 1234.5)).toBe("1,235 req/s");
    expect(formatValue("%", 2.9167)).toBe("2.92 %");
    expect(formatValue("%", 0.04)).toBe("0.04 %");
    expect(formatValue("ms", 412.6)).toBe("413 ms");
    expect(formatValue("ms", 1530)).toBe("1.53 s");
    expect(formatValue("users", NaN)).toBe("–");
  });

  it("signs the bias with a true minus, in the metric's unit, with its interval and the number of windows", () => {
    expect(formatSigned(-1.5)).toBe(`${M}1.5`);
    expect(formatSigned(0.25)).toBe("+0.25");
    expect(formatSigned(0)).toBe("0");
    expect(formatSigned(-0.0001)).toBe("0");
    const measured = { windows: 30, scope: "service" as const, provisional: false };
    expect(formatBias({ value: -1.4, unit: "pp", spread: 0.3 }, measured)).toBe(`${M}1.4 \u00b1 0.3 pp, 30 win.`);
    expect(formatBias({ value: 6.4, unit: "%", spread: 0.25 }, { ...measured, windows: 1 })).toBe(
      "+6.4 \u00b1 0.25 %, 1 win.",
    );
  });

  it("leaves the interval out when the engine sends none or has one sample", () => {
    // An older engine: no spread, no scope, no provisional flag.
    expect(formatBias({ value: -1.5, unit: "pp", spread: null }, { windows: 30 })).toBe(`${M}1.5 pp, 30 win.`);
  });

  it("marks a policy-wide fallback and a provisional lower bound", () => {
    expect(
      formatBias({ value: -0.33, unit: "pp", spread: 0.1 }, { windows: 30, scope: "policy", provisional: false }),
    ).toBe(`${M}0.33 \u00b1 0.1 pp, 30 win., policy-wide`);
    expect(
      formatBias({ value: -0.8, unit: "%", spread: 0.5 }, { windows: 3, scope: "service", provisional: true }),
    ).toBe("\u2265 0.8 % under so far (provisional, 3 win.)");
    expect(
      formatBias({ value: 0.2, unit: "pp", spread: null }, { windows: 0, scope: "policy", provisional: true }),
    ).toBe("\u2265 0.2 pp over so far (provisional, policy-wide)");
  });

  it("says why there is no bias", () => {
    expect(formatBias(null, { windows: 0 })).toBe("not measured yet");
    expect(formatBias(null, { windows: 30 })).toBe("not measured for this metric");
  });

  it("writes the emit delay as policy delay plus pipeline lag", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(2000)).toBe("2 s");
    expect(formatDuration(100_000)).toBe("1 m 40 s");
    expect(formatDuration(120_000)).toBe("2 m");
    expect(formatDuration(null)).toBe("–");
    expect(formatEmitDelay(2000, 40)).toBe("emit 2 s + 40 ms pipeline");
  });
});
