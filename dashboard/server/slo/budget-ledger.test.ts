import { describe, expect, it } from "vitest";
import { BudgetLedger, HOUR_MS } from "./budget-ledger.js";
import { decodeHour, encodeHour } from "./budget-codec.js";
import { SloCells, zero, type Counts } from "./slo-cells.js";
import { slopane } from "./slo-pane.fixture.js";
import { parseSlos, type SloDefinition } from "./slo-config.js";

const W = 10_000;
const T0 = Date.UTC(2026, 0, 1);
const slo = (extra: Record<string, unknown> = {}): SloDefinition =>
  parseSlos(
    [{ name: "s", service: "a", objective: 0.99, period: "6h", ...extra }],
    { policies: ["alerting"], windowsMs: [W] },
    "test",
  )[0] as SloDefinition;
const counts = (count: number, errors: number): Counts => ({
  ...zero(),
  count,
  errors,
  corrCount: count,
  corrErrors: errors,
});

describe("the budget ledger", () => {
  it("counts each settled window once, per hour, and equals a brute-force sum over the period", () => {
    const l = new BudgetLedger(slo());
    const ends: number[] = [];
    for (let i = 1; i <= 8 * 360; i++) {
      const end = T0 + i * W;
      expect(l.settle(end, counts(100 + (i % 9), i % 4))).toBe(true);
      // The same window again (a replayed final pane) is not counted.
      expect(l.settle(end, counts(100, 100))).toBe(false);
      ends.push(end);
    }
    const t = ends.at(-1) as number;
    // Brute force: every window whose end's hour reaches into the last 6 hours.
    let n = 0;
    let e = 0;
    ends.forEach((end, k) => {
      const i = k + 1;
      if (end - (end % HOUR_MS) + HOUR_MS > t - 6 * HOUR_MS) {
        n += 100 + (i % 9);
        e += i % 4;
      }
    });
    expect([l.total(t).count, l.total(t).errors]).toEqual([n, e]);
    // Bounded: 6 h of hours and the one being filled, older ones pruned (to be purged from the store).
    expect(l.size).toBeLessThanOrEqual(l.maxHours);
    expect(l.maxHours).toBe(7);
    const { changed, pruned } = l.take();
    expect(changed.length).toBe(l.size);
    expect(pruned.length).toBe(9 - l.size);
  });

  it("restores its hours from their messages, not those of another definition", () => {
    const s = slo();
    const l = new BudgetLedger(s);
    for (let i = 1; i <= 400; i++) l.settle(T0 + i * W, counts(10, 1));
    const again = new BudgetLedger(s);
    for (const h of l.hoursHeld()) expect(again.restore(decodeHour(s, encodeHour(s, h)) as never)).toBe(true);
    expect(again.total(T0 + 400 * W)).toEqual(l.total(T0 + 400 * W));
    expect(again.has(T0 + 17 * W)).toBe(true);
    expect(again.firstEnd()).toBe(T0 + W);
    expect(again.settle(T0 + 17 * W, counts(10, 1))).toBe(false);
    // Another service, SLI or pane size counts other windows: its hours are not read into this SLO.
    const h = l.hoursHeld()[0];
    expect(decodeHour(slo({ service: "b" }), encodeHour(s, h as never))).toBeUndefined();
    expect(decodeHour(slo({ sli: { latencyAboveMs: 300 } }), encodeHour(s, h as never))).toBeUndefined();
    expect(decodeHour(s, "{not json")).toBeUndefined();
  });

  it("settles the on-time panes of a policy that has no final pane, measuring a latency SLO's early bias against them", () => {
    const [s] = parseSlos(
      [{ name: "d", service: "checkout", objective: 0.99, policy: "dashboard", sli: { latencyAboveMs: 300 } }],
      { policies: ["dashboard"], windowsMs: [W] },
      "test",
    );
    const d = s as SloDefinition;
    expect(d.settledBy).toBe("on-time");
    const cells = new SloCells(d, HOUR_MS);
    for (let i = 0; i < 10; i++) {
      // The early pane sees 2 slow of 50 (4 %), the on-time one 10 of 100 (10 %): −6 pp each window.
      cells.apply(slopane(i, "early", { count: 50, errors: 0, latencyAbove: { "300": 2 } }, { policy: "dashboard" }));
      cells.apply(
        slopane(i, "on-time", { count: 100, errors: 0, latencyAbove: { "300": 10 } }, { policy: "dashboard" }),
      );
    }
    const t = cells.newestEnd;
    expect(cells.ledger.has(t)).toBe(true);
    expect([cells.ledger.total(t).count, cells.ledger.total(t).errors]).toEqual([1000, 100]);
    // The next early pane is corrected by the 10 windows measured: 4 % + 6 pp, interval 0 (no spread).
    cells.apply(slopane(10, "early", { count: 50, errors: 0, latencyAbove: { "300": 2 } }, { policy: "dashboard" }));
    const c = cells.cell(t + W);
    expect(c?.corrErrors).toBeCloseTo(50 * 0.1, 12);
    expect([c?.unmeasured, c?.spreadWeight]).toEqual([0, 0]);
  });
});
