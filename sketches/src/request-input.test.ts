import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DDSketch } from "./ddsketch.js";
import { HyperLogLog } from "./hyperloglog.js";
import { RequestAggregate } from "./request-aggregate.js";
import { RequestInput } from "./request-input.js";

/** Any non-negative finite latency, zeros, subnormals and huge values included. */
const latency = fc.oneof(
  fc.double({ min: 0, max: 1e300, noNaN: true, noDefaultInfinity: true }),
  fc.constant(0),
  fc.constant(-0),
  fc.integer({ min: 1, max: 20_000 }).map((k) => k / 10),
);
/** Requests over a few users (repeats) or many (past the sparse → dense switch of precision 10 and 4). */
const requests = fc.array(fc.tuple(latency, fc.boolean(), fc.integer({ min: 0, max: 3000 })), {
  maxLength: 600,
  size: "max",
});
const accuracy = fc.constantFrom(0.01, 0.02, 0.05);

describe("RequestInput: addInput changes a sketch exactly as add / addHash / addHashed", () => {
  it("RequestAggregate: same bytes as addHashed, for inputs made at its accuracy and at another", () => {
    fc.assert(
      fc.property(requests, accuracy, accuracy, fc.constantFrom(4, 10, 14), (reqs, mine, inputs, precision) => {
        const opts = { relativeAccuracy: mine, hllPrecision: precision };
        const byHash = new RequestAggregate(opts);
        const byInput = new RequestAggregate(opts);
        const input = new RequestInput(inputs);
        for (const [l, error, u] of reqs) {
          const h = HyperLogLog.hash(`user-${u}`);
          byHash.addHashed(l, error, h);
          byInput.addInput(input.set(l, error, h));
        }
        expect(byInput.encode()).toEqual(byHash.encode());
        expect(byInput.count).toBe(byHash.count);
        expect(byInput.errors).toBe(byHash.errors);
        expect(byInput.distinctUsers()).toBe(byHash.distinctUsers());
        expect(byInput.quantiles([0, 0.5, 0.99, 1])).toEqual(byHash.quantiles([0, 0.5, 0.99, 1]));
      }),
      { numRuns: 200 },
    );
  });

  it("DDSketch and HyperLogLog: same bytes as add and addHash", () => {
    fc.assert(
      fc.property(requests, accuracy, (reqs, alpha) => {
        const [d1, d2] = [new DDSketch({ relativeAccuracy: alpha }), new DDSketch({ relativeAccuracy: alpha })];
        const [h1, h2] = [new HyperLogLog({ precision: 6 }), new HyperLogLog({ precision: 6 })];
        const input = new RequestInput(alpha);
        for (const [l, error, u] of reqs) {
          const h = HyperLogLog.hash(String(u));
          input.set(l, error, h);
          d1.add(l);
          d2.addInput(input);
          h1.addHash(h);
          h2.addInput(input);
        }
        expect(d2.encode()).toEqual(d1.encode());
        expect(h2.encode()).toEqual(h1.encode());
      }),
      { numRuns: 200 },
    );
  });

  it("set rejects what add rejects, naming the value, and keeps its fields", () => {
    const input = new RequestInput().set(12.5, true, HyperLogLog.hash("u"));
    for (const bad of [-1, NaN, Infinity]) {
      expect(() => input.set(bad, false, 1)).toThrow(/value must be|value/);
      expect(() => new RequestAggregate().add(bad, false, "u")).toThrow();
    }
    expect([input.latency, input.error, input.hash]).toEqual([12.5, true, HyperLogLog.hash("u")]);
  });
});
