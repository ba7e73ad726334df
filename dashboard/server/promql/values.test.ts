import { describe, expect, it } from "vitest";
import { formatValue } from "./values.js";

describe("formatValue", () => {
  it("writes sample values as Prometheus does: shortest decimal, no exponent, NaN and ±Inf spelled out", () => {
    expect(formatValue(2)).toBe("2");
    expect(formatValue(0.1)).toBe("0.1");
    expect(formatValue(-1.25)).toBe("-1.25");
    expect(formatValue(1e21)).toBe("1000000000000000000000");
    expect(formatValue(1.5e-7)).toBe("0.00000015");
    expect(formatValue(-2.5e-10)).toBe("-0.00000000025");
    expect(formatValue(NaN)).toBe("NaN");
    expect(formatValue(Infinity)).toBe("+Inf");
    expect(formatValue(-Infinity)).toBe("-Inf");
  });
});
