import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LogMapping, approxExp2, approxLog2 } from "./log-mapping.js";

/** Log-uniform positive normal doubles across the whole range. */
const normalDouble = fc.double({ min: -1021, max: 1023.99, noNaN: true }).map((l) => Math.pow(2, l));

describe("LogMapping", () => {
  it.each([0.01, 0.001, 0.05, 0.0001, 0.5])("α = %s: every value maps to a key whose value is within α", (alpha) => {
    const m = LogMapping.of(alpha);
    fc.assert(
      fc.property(normalDouble, (v) => {
        const err = Math.abs(m.value(m.key(v)) - v) / v;
        expect(err).toBeLessThanOrEqual(alpha * (1 + 1e-9));
      }),
      { numRuns: 3000 },
    );
    for (const v of [Number.MIN_VALUE * 2 ** 60, 1e-300, 0.001, 1, 2, 3, 1024, 1e300, Number.MAX_VALUE]) {
      expect(Math.abs(m.value(m.key(v)) - v) / v, `v=${v}`).toBeLessThanOrEqual(alpha * (1 + 1e-9));
    }
  });

  it("keys never decrease as values grow, powers of two included", () => {
    const m = LogMapping.of(0.01);
    fc.assert(
      fc.property(normalDouble, normalDouble, (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(m.key(lo)).toBeLessThanOrEqual(m.key(hi));
      }),
      { numRuns: 3000 },
    );
    for (let e = -20; e <= 20; e++) {
      const v = 2 ** e;
      expect(m.key(v * (1 - 2 ** -52))).toBeLessThanOrEqual(m.key(v));
      expect(m.key(v)).toBeLessThanOrEqual(m.key(v * (1 + 2 ** -52)));
    }
  });

  it("approxExp2 inverts approxLog2, and both are exact at powers of two", () => {
    for (const v of [1e-310, 1e-5, 0.75, 1, 1.5, 12345.678, 1e200]) {
      expect(Math.abs(approxExp2(approxLog2(v)) - v) / v).toBeLessThan(1e-12);
    }
    for (let e = -1074; e <= 1023; e += 7) expect(approxLog2(2 ** e)).toBe(e);
  });

  it("rejects accuracies outside [0.0001, 0.5]", () => {
    for (const bad of [0, 0.6, -0.01, NaN])
      expect(() => LogMapping.of(bad)).toThrow(/relativeAccuracy must be a number in \[0.0001, 0.5\]/);
  });
});
