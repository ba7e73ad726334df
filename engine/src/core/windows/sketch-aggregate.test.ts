/**
 * The production aggregate (docs/decisions/0015-light-state.md): service keys count distinct
 * users at the configured HyperLogLog precision, route keys at routeHllPrecision (4 less), each
 * within its standard error 1.04/√2^p; a single request stays a small aggregate.
 */
import { HyperLogLog, RequestAggregate } from "@tidemark/sketches";
import { describe, expect, it } from "vitest";
import { routeHllPrecision, sketchAggregates } from "./sketch-aggregate.js";

describe("sketchAggregates", () => {
  const kind = sketchAggregates(0.01, 14);

  it("route keys use 4 bits less of HyperLogLog precision (at least 4), service keys the configured one", () => {
    expect([routeHllPrecision(14), routeHllPrecision(10), routeHllPrecision(6)]).toEqual([10, 6, 4]);
    const service = kind.create();
    const route = kind.create(true);
    for (const a of [service, route]) a.add(5, false, kind.hashUser("u"));
    expect(RequestAggregate.decode(service.encode()).users.precision).toBe(14);
    expect(RequestAggregate.decode(route.encode()).users.precision).toBe(10);
  });

  it("distinct users of both levels are within 3 standard errors of the truth, across the sparse-to-dense switch", () => {
    for (const n of [10, 200, 5000, 50_000]) {
      const service = kind.create();
      const route = kind.create(true);
      for (let i = 0; i < n; i++) {
        const h = HyperLogLog.hash(`user-${i}`);
        service.add(10 + (i % 50), i % 10 === 0, h);
        route.add(10 + (i % 50), i % 10 === 0, h);
      }
      expect(Math.abs(service.value().users - n) / n).toBeLessThanOrEqual(3 * (1.04 / 2 ** 7));
      expect(Math.abs(route.value().users - n) / n).toBeLessThanOrEqual(3 * (1.04 / 2 ** 5));
      expect([route.value().count, route.value().errors]).toEqual([n, n / 10]);
    }
  });

  it("merging a route into a service aggregate is refused: the levels never mix", () => {
    expect(() => kind.create().merge(kind.create(true))).toThrow(
      expect.objectContaining({ code: "TM_SKETCH_MISMATCH" }),
    );
  });
});
