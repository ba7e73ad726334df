import { describe, expect, it } from "vitest";
import { DemoModel, type PlannedEvent } from "./model.js";
import { DEMO_CATALOG } from "./catalog.js";

const CALM = { slowPerHour: 0, burstsPerHour: 0, partitionsPerHour: 0 };
const T0 = 1_800_000_000_000;

/** Runs the model for `seconds` at `perSecond` events, asking every 100 ms like the sender. */
function run(model: DemoModel, seconds: number, perSecond: number): PlannedEvent[] {
  const out: PlannedEvent[] = [];
  for (let t = 0; t <= seconds * 1000; t += 100) out.push(...model.generate(T0 + t, perSecond / 10));
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const errorShare = (es: PlannedEvent[]): number => es.filter((p) => p.event.status >= 500).length / es.length;

describe("DemoModel", () => {
  it("is deterministic for a seed and differs across seeds", () => {
    const a = run(new DemoModel({ seed: 7 }), 5, 200);
    const b = run(new DemoModel({ seed: 7 }), 5, 200);
    const c = run(new DemoModel({ seed: 8 }), 5, 200);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it("places each event in the interval it was asked about and never sends before it happened", () => {
    const model = new DemoModel({ seed: 1 });
    model.generate(T0, 0);
    const batch = model.generate(T0 + 250, 500);
    expect(batch).toHaveLength(500);
    for (const p of batch) {
      expect(p.event.ts).toBeGreaterThanOrEqual(T0);
      expect(p.event.ts).toBeLessThanOrEqual(T0 + 250);
      expect(p.sendAt).toBeGreaterThanOrEqual(p.event.ts);
      expect(Number.isInteger(p.event.ts)).toBe(true);
    }
  });

  it("follows the seed's delay mixture: 8 % tail uniform 5–90 s, head exponential around 2 s", () => {
    const es = run(new DemoModel({ seed: 3, incidents: CALM }), 60, 2000);
    const delays = es.map((p) => p.sendAt - p.event.ts);
    const share = (pred: (d: number) => boolean): number => delays.filter(pred).length / delays.length;
    // Beyond 15 s only the tail remains (the head's e^-7.5 is negligible): 8 % × 75/85.
    expect(share((d) => d > 15_000)).toBeGreaterThan(0.065);
    expect(share((d) => d > 15_000)).toBeLessThan(0.076);
    // Below 5 s: the head's 1 − e^-2.5 of 92 %.
    expect(share((d) => d < 5000)).toBeGreaterThan(0.835);
    expect(share((d) => d < 5000)).toBeLessThan(0.855);
    // "late" = 5 s or more: the tail plus the head's long delays.
    expect(es.filter((p) => p.late).length / es.length).toBeCloseTo(1 - share((d) => d < 5000), 6);
    expect(Math.max(...delays)).toBeLessThanOrEqual(90_000);
    expect(Math.max(...delays)).toBeGreaterThan(85_000);
    // The seed prints p50 ≈ 1.6 s for this mixture.
    expect(median(delays)).toBeGreaterThan(1300);
    expect(median(delays)).toBeLessThan(1900);
  });

  it("draws lognormal latencies around each route's median", () => {
    const es = run(new DemoModel({ seed: 4, incidents: CALM }), 30, 2000);
    const route = DEMO_CATALOG[2]?.routes[0];
    if (!route) throw new Error("catalog changed");
    const lat = es
      .filter((p) => p.event.route === route.route && p.event.status !== 504)
      .map((p) => p.event.latency_ms);
    expect(lat.length).toBeGreaterThan(1000);
    expect(Math.abs(median(lat) / route.medianMs - 1)).toBeLessThan(0.08);
    // Lognormal: the p99/median ratio is e^(2.326 sigma).
    const p99 = [...lat].sort((a, b) => a - b)[Math.floor(lat.length * 0.99)] ?? 0;
    expect(p99 / median(lat)).toBeGreaterThan(Math.exp(2.326 * route.sigma) * 0.8);
  });

  it("--corr makes late events fail more often; without it lateness and errors are independent", () => {
    const independent = run(new DemoModel({ seed: 5, incidents: CALM }), 60, 2000);
    const lateI = independent.filter((p) => p.late);
    const onTimeI = independent.filter((p) => !p.late);
    expect(Math.abs(errorShare(lateI) - errorShare(onTimeI))).toBeLessThan(0.006);

    const correlated = run(new DemoModel({ seed: 5, incidents: CALM, corr: 0.3 }), 60, 2000);
    const lateC = correlated.filter((p) => p.late);
    const onTimeC = correlated.filter((p) => !p.late);
    expect(errorShare(lateC)).toBeGreaterThan(0.28);
    expect(errorShare(lateC)).toBeLessThan(0.34);
    expect(errorShare(onTimeC)).toBeLessThan(0.01);
    expect(() => new DemoModel({ seed: 1, corr: 1.5 })).toThrow(/corr/);
  });

  it("has error bursts, slow spells and partitions that dump a backlog when they heal", () => {
    const es = run(
      new DemoModel({ seed: 6, incidents: { slowPerHour: 60, burstsPerHour: 60, partitionsPerHour: 30 } }),
      600,
      200,
    );
    const buckets = new Map<string, { n: number; errors: number; lat: number[] }>();
    for (const p of es) {
      const k = `${p.event.service}|${Math.floor(p.event.ts / 10_000)}`;
      const b = buckets.get(k) ?? { n: 0, errors: 0, lat: [] };
      b.n++;
      if (p.event.status >= 500) b.errors++;
      b.lat.push(p.event.latency_ms);
      buckets.set(k, b);
    }
    const rates = [...buckets.values()].filter((b) => b.n >= 50).map((b) => b.errors / b.n);
    expect(Math.max(...rates)).toBeGreaterThan(0.12);
    expect(median(rates)).toBeLessThan(0.03);
    // A healed partition releases many events of one service within about a second.
    const bySecond = new Map<string, number>();
    for (const p of es.filter((x) => x.late)) {
      const k = `${p.event.service}|${Math.floor(p.sendAt / 1000)}`;
      bySecond.set(k, (bySecond.get(k) ?? 0) + 1);
    }
    expect(Math.max(...bySecond.values())).toBeGreaterThan(20);
  });

  it("gives users sessions: repeated users from a skewed population", () => {
    const es = run(new DemoModel({ seed: 9, users: 1000, sessions: 50 }), 10, 1000);
    const users = new Set(es.map((p) => p.event.user));
    expect(users.size).toBeGreaterThan(50);
    expect(users.size).toBeLessThan(es.length / 5);
    const services = new Set(es.map((p) => p.event.service));
    expect(services.size).toBe(DEMO_CATALOG.length);
  });
});
