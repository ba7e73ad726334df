import { describe, expect, it } from "vitest";
import { AcceptedLedger } from "./ledger.js";

describe("AcceptedLedger", () => {
  it("counts events and errors (status ≥ 500) per service and tumbling window of event time", () => {
    const l = new AcceptedLedger(10_000);
    l.add({ ts: 1_000_009_999, service: "b", status: 500 });
    l.add({ ts: 1_000_000_000, service: "a", status: 200 });
    l.add({ ts: 1_000_009_999, service: "a", status: 499 });
    l.add({ ts: 1_000_010_000, service: "a", status: 503 });
    l.add({ ts: 1_000_010_001, service: "a", status: 599 });
    expect(l.toJSON()).toEqual({
      windowMs: 10_000,
      services: {
        a: { "1000000000": { count: 2, errors: 0 }, "1000010000": { count: 2, errors: 2 } },
        b: { "1000000000": { count: 1, errors: 1 } },
      },
      total: 5,
      errors: 3,
      firstTs: 1_000_000_000,
      lastTs: 1_000_010_001,
      exact: true,
    });
    expect(l.count).toBe(5);
  });

  it("adds up: the windows' counts and errors sum to the totals, whatever the window", () => {
    for (const windowMs of [1, 999, 10_000, 60_000]) {
      const l = new AcceptedLedger(windowMs);
      for (let i = 0; i < 5000; i++)
        l.add({ ts: 1_700_000_000_000 + i * 37, service: `s${i % 7}`, status: i % 13 === 0 ? 502 : 200 });
      const j = l.toJSON();
      const cells = Object.values(j.services).flatMap((w) => Object.entries(w));
      expect(cells.reduce((a, [, c]) => a + c.count, 0)).toBe(5000);
      expect(cells.reduce((a, [, c]) => a + c.errors, 0)).toBe(j.errors);
      expect(j.errors).toBe(Math.ceil(5000 / 13));
      for (const [start] of cells) expect(Number(start) % windowMs).toBe(0);
    }
  });

  it("is empty with null times before anything is accepted, and says when it is not exact", () => {
    const l = new AcceptedLedger(10_000);
    expect(l.toJSON()).toMatchObject({ services: {}, total: 0, firstTs: null, lastTs: null, exact: true });
    l.markInexact();
    expect(l.isExact).toBe(false);
    expect(() => new AcceptedLedger(0)).toThrow(RangeError);
  });
});
