import { describe, expect, it } from "vitest";
import { prng } from "../prng.fixture.js";
import type { AlertNotice } from "../rules/index.js";
import { SloBook } from "./slo-book.js";
import { parseSlos, type SloDefinition } from "./slo-config.js";
import { slopane, T0, W } from "./slo-pane.fixture.js";

const scope = { policies: ["alerting"], windowsMs: [W, 60_000] };
const BUDGET = 0.01;
const FACTOR = 3;
/** Windows a final pane comes after its on-time pane (so a 5 m window reads on-time panes only). */
const SETTLE = 30;

function slo(extra: Record<string, unknown> = {}): SloDefinition {
  const [s] = parseSlos(
    [
      {
        name: "checkout-latency",
        service: "checkout",
        objective: 1 - BUDGET,
        sli: { latencyAboveMs: 300 },
        policy: "alerting",
        tiers: [{ severity: "page", long: "10m", short: "5m", factor: FACTOR }],
        ...extra,
      },
    ],
    scope,
    "test",
  );
  return s as SloDefinition;
}

interface Ev {
  latency: number;
  /** Fraction of the window elapsed when it arrived, and whether it missed the on-time pane. */
  at: number;
  late: boolean;
}

/** Correlated lateness: slow requests miss the on-time pane far more often than fast ones. */
function windowEvents(rand: () => number, i: number): Ev[] {
  const slowP = 0.045 + 0.01 * Math.sin(i / 7);
  return Array.from({ length: 200 }, () => {
    const slow = rand() < slowP;
    return {
      latency: slow ? 301 + rand() * 900 : rand() * 300,
      at: rand(),
      late: rand() < (slow ? 0.6 : 0.05),
    };
  });
}

const counts = (evs: Ev[]) => {
  const slow = evs.filter((e) => e.latency > 300).length;
  return {
    count: evs.length,
    errors: 0,
    latencyAbove: { "300": slow, "1000": evs.filter((e) => e.latency > 1000).length },
  };
};
const onTime = (evs: Ev[]) => evs.filter((e) => !e.late);
const early = (evs: Ev[]) => evs.filter((e) => !e.late && e.at < 0.5);
const ratio = (evs: Ev[]) => evs.filter((e) => e.latency > 300).length / evs.length;

function rig(s: SloDefinition) {
  const fired: AlertNotice[] = [];
  const events: Array<[string, AlertNotice]> = [];
  const book = new SloBook([s], "http://dash", {
    fired: (n) => void (fired.push(n), events.push(["fired", n])),
    updated: (n) => void events.push(["updated", n]),
    ended: (n, how) => void events.push([how, n]),
  });
  return { book, fired, events };
}

describe("the latency SLI", () => {
  it("burns on exact slow counts, corrected by the bias measured against the final panes", () => {
    const rand = prng(36);
    const { book, events } = rig(slo());
    const windows: Ev[][] = [];
    const readings: Array<{
      raw: number;
      corrected: number;
      hw: number;
      truth: number;
      oracle: number;
      oracleHw: number;
    }> = [];
    for (let i = 0; i < 150; i++) {
      const evs = windowEvents(rand, i);
      windows.push(evs);
      book.offer(slopane(i, "early", counts(early(evs))));
      book.offer(slopane(i, "on-time", counts(onTime(evs))));
      const settled = i - SETTLE;
      if (settled >= 0)
        book.offer(slopane(settled, "final", counts(windows[settled] as Ev[]), { emittedAt: T0 + (i + 1) * W + 2000 }));
      book.flush();
      // Read once every pane of the 5 m window was corrected with 30 measured windows.
      if (i < 3 * SETTLE - 1) continue;
      const v = book.read("checkout-latency", T0 + (i + 1) * W)?.verdicts[0];
      // Brute force over the events: a window's on-time pane is corrected by the on-time bias (pp)
      // of the last 30 windows settled before it came, (on-time ratio − final ratio) averaged.
      const biasAt = (j: number) => {
        const last = j - SETTLE - 1;
        const diffs = windows.slice(last - 29, last + 1).map((w) => 100 * (ratio(onTime(w)) - ratio(w)));
        const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
        const sd = Math.sqrt(diffs.reduce((a, d) => a + (d - mean) ** 2, 0) / (diffs.length - 1));
        // t(0.975, 29) = 2.0452 (standard tables).
        return { mean, hw: (2.0452 * sd) / Math.sqrt(30) };
      };
      const js = Array.from({ length: 30 }, (_, k) => i - 29 + k);
      const n = js.reduce((a, j) => a + onTime(windows[j] as Ev[]).length, 0);
      const corrSlow = js.reduce((a, j) => {
        const w = onTime(windows[j] as Ev[]);
        return a + w.length * Math.max(0, ratio(w) - biasAt(j).mean / 100);
      }, 0);
      const hwSum = js.reduce((a, j) => a + onTime(windows[j] as Ev[]).length * biasAt(j).hw, 0);
      const short = js.map((j) => windows[j] as Ev[]);
      const truthN = short.reduce((a, w) => a + w.length, 0);
      const truthSlow = short.reduce((a, w) => a + w.filter((e) => e.latency > 300).length, 0);
      expect(v?.short.raw).toBeCloseTo(
        short.reduce((a, w) => a + ratio(onTime(w)) * onTime(w).length, 0) / n / BUDGET,
        9,
      );
      readings.push({
        raw: v?.short.raw as number,
        corrected: v?.short.corrected as number,
        hw: v?.short.halfWidth as number,
        truth: truthSlow / truthN / BUDGET,
        oracle: corrSlow / n / BUDGET,
        // pp → ratio → burn rate; the count-weighted mean of the panes' half-widths.
        oracleHw: hwSum / n / 100 / BUDGET,
      });
    }
    expect(readings.length).toBe(150 - (3 * SETTLE - 1));
    let corrErr = 0;
    let rawErr = 0;
    let hws = 0;
    for (const r of readings) {
      expect(r.corrected).toBeCloseTo(r.oracle, 9);
      expect(r.hw).toBeCloseTo(r.oracleHw, 3);
      // The policy's own word never pages; corrected, it does, as the events say it should.
      expect(r.raw).toBeLessThan(FACTOR);
      expect(r.truth).toBeGreaterThan(FACTOR);
      expect(r.corrected).toBeGreaterThan(FACTOR);
      corrErr += Math.abs(r.corrected - r.truth);
      rawErr += Math.abs(r.raw - r.truth);
      hws += r.hw;
    }
    const n = readings.length;
    console.log(
      `latency SLI over ${n} ends: |corrected − events| ${(corrErr / n).toFixed(3)}, |raw − events| ${(rawErr / n).toFixed(3)}, mean half-width ${(hws / n).toFixed(3)}`,
    );
    expect(corrErr / n).toBeLessThan(hws / n);
    expect(rawErr / n).toBeGreaterThan(2 * (hws / n));
    // The page fires on the corrected burn rate and is firing at the end, no longer provisional.
    const last = events.filter(([k]) => k !== "updated").at(-1);
    expect([last?.[0], last?.[1].labels["slo"], last?.[1].labels["severity"]]).toEqual([
      "fired",
      "checkout-latency",
      "page",
    ]);
    const latest = events.at(-1)?.[1];
    expect(latest?.annotations["provisional"]).toBeUndefined();
    // (The 10 m window's older half is settled: its raw value is the events'; the 5 m one reads on-time panes.)
    expect(Number(latest?.annotations["burn_rate_short_raw"])).toBeLessThan(FACTOR);
    expect(Number(latest?.annotations["burn_rate_short"]?.split(" ± ")[0])).toBeGreaterThan(FACTOR);
    // Every window settled: the budget is the events' own, raw and corrected (a final pane is its own reference).
    for (let j = 150 - SETTLE; j < 150; j++) book.offer(slopane(j, "final", counts(windows[j] as Ev[])));
    book.flush();
    const all = windows.flat();
    const budget = book.read("checkout-latency")?.budget;
    expect(budget?.remainingRaw).toBeCloseTo(1 - ratio(all) / BUDGET, 12);
    expect(budget?.remaining).toBeCloseTo(1 - ratio(all) / BUDGET, 12);
    expect(budget?.halfWidth).toBeCloseTo(0, 12);
  });

  it("counts its own threshold only", () => {
    const { book } = rig(slo({ sli: { latencyAboveMs: 1000 } }));
    const rand = prng(7);
    const evs = windowEvents(rand, 0);
    book.offer(slopane(0, "final", counts(evs)));
    book.flush();
    const v = book.read("checkout-latency")?.verdicts[0];
    expect(v?.short.raw).toBeCloseTo(evs.filter((e) => e.latency > 1000).length / evs.length / BUDGET, 12);
  });

  it("says so when the panes carry no count for its threshold, instead of reading 0", () => {
    const { book, fired } = rig(slo({ sli: { latencyAboveMs: 250 } }));
    for (let i = 0; i < 60; i++)
      book.offer(slopane(i, "final", { count: 100, errors: 0, latencyAbove: { "300": 90 } }));
    book.flush();
    const got = book.read("checkout-latency");
    expect(got?.status).toBe(
      "no exact latency counts for 250 ms in the panes: the engine must be restarted with this config",
    );
    expect(got?.verdicts[0]?.short.requests).toBe(0);
    expect(fired).toEqual([]);
    // Once the engine counts it, the status goes.
    book.offer(slopane(60, "final", { count: 100, errors: 0, latencyAbove: { "250": 1 } }));
    book.flush();
    expect(book.read("checkout-latency")?.status).toBeNull();
  });
});
