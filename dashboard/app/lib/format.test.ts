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

  it("signs the bias with a true minus, in the metric's unit, with the number of windows", () => {
    expect(formatSigned(-1.5)).toBe(`${M}1.5`);
    expect(formatSigned(0.25)).toBe("+0.25");
    expect(formatSigned(0)).toBe("0");
    expect(formatSigned(-0.0001)).toBe("0");
    expect(formatBias({ value: -1.5, unit: "pp" }, 30)).toBe(`bias ${M}1.5 pp (30 windows)`);
    expect(formatBias({ value: 6.4, unit: "%" }, 1)).toBe("bias +6.4 % (1 window)");
    expect(formatBias(null, 0)).toBe("bias not measured yet");
    expect(formatBias(null, 30)).toBe("bias not measured for this metric");
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
