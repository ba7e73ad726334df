import { describe, expect, it } from "vitest";
import { capture } from "./__fixtures__/capture.js";
import { createCore } from "./create-core.js";
import { simulate } from "./simulation.js";
import { validateCoreConfig } from "./validate-config.js";
import { bruteForceBias, bruteForceEmitDelays, type Interval } from "./__fixtures__/bias-oracle.js";

/** Default sketches: DDSketch α = 0.01; sparse HyperLogLog within 1 % below 1000 distinct (ADR 0003). */
const SKETCH_ERROR = { alpha: 0.01, hll: 0.01 };

function expectWithin(got: number | null | undefined, range: Interval | null): void {
  expect(range).not.toBeNull();
  expect(got).toBeGreaterThanOrEqual((range as Interval).lo);
  expect(got).toBeLessThanOrEqual((range as Interval).hi);
}

const events = simulate({ seed: 21, events: 6000, services: 3, spanMs: 300_000, corr: 0.6 });

describe("sliding windows, percentile watermarks and measured bias", () => {
  it("sliding windows (size 30 s, slide 20 s, slices of 10 s) hold exactly the events of [start, start + 30 s)", () => {
    const core = createCore(
      validateCoreConfig({
        partitions: 1,
        windows: [{ kind: "sliding", size: "30s", slide: "20s" }],
        policies: [{ name: "exact", watermark: { kind: "arrival-lag", lag: "90s" }, mode: "final-only" }],
      }),
    );
    const out = capture();
    for (const e of events) core.event(0, e, out);
    core.finish(out);
    const finals = out.panes.filter((p) => p.key.route === undefined);
    expect(finals.length).toBeGreaterThan(40);
    for (const p of finals) {
      expect(p.window.end - p.window.start).toBe(30_000);
      expect(p.window.start % 20_000).toBe(0);
      const inWindow = events.filter(
        (e) => e.service === p.key.service && e.ts >= p.window.start && e.ts < p.window.end,
      );
      expect([p.value.count, p.value.errors]).toEqual([
        inWindow.length,
        inWindow.filter((e) => e.status >= 500).length,
      ]);
    }
    // every event lies in ceil(30/20) or floor(30/20) windows: the counts add up to 1.5 × events.
    expect(finals.reduce((s, p) => s + p.value.count, 0)).toBe(
      events.reduce((s, e) => s + (e.ts % 20_000 < 10_000 ? 2 : 1), 0),
    );
  });

  it("a percentile watermark trails log time by the q-quantile of recent delays", () => {
    const core = createCore(
      validateCoreConfig({
        partitions: 1,
        windows: ["10s"],
        policies: [{ name: "p90", watermark: { kind: "percentile", q: 0.9, sample: 100 }, mode: "final-only" }],
      }),
    );
    const out = capture();
    const T = 1_767_225_600_000;
    // delays 1..100 ms in a shuffled order: the 0.9-quantile of the last 100 is the 90th smallest.
    for (let i = 0; i < 100; i++) {
      const delay = ((i * 37) % 100) + 1;
      core.event(
        0,
        {
          ts: T + i * 1000 - delay,
          ingest_ts: T + i * 1000,
          service: "a",
          route: "/",
          status: 200,
          latency_ms: 1,
          user: "",
        },
        out,
      );
    }
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(core.status().policies[0]?.watermark).toBe(T + 99_000 - (sorted[Math.floor(0.9 * 99)] as number));
  });

  it("measures bias against the reference: a fast policy under-counts and, with lateness correlated with failure, under-reports errors", () => {
    const core = createCore(
      validateCoreConfig({
        partitions: 1,
        windows: ["60s"],
        policies: [
          { name: "fast", watermark: { kind: "arrival-lag", lag: "2s" }, mode: "final-only" },
          { name: "exact", watermark: { kind: "arrival-lag", lag: "90s" }, mode: "final-only" },
        ],
        referenceHorizon: "2m",
      }),
    );
    const out = capture();
    for (const e of events) core.event(0, e, out);
    const [fast, exact] = core.status().policies;
    // The brute-force oracle: exact counts, errors, sorted latencies and distinct user sets per window.
    const truth = bruteForceBias(events, 60_000, { lagMs: 2000, graceMs: 0 }, 120_000, 30, SKETCH_ERROR);
    expect(truth.windows).toBe(4);
    expect(fast?.bias.windows).toBe(truth.windows);
    expect(fast?.bias.countPct).toBeCloseTo(truth.countPct as number, 9);
    expect(fast?.bias.errorRatePp).toBeCloseTo(truth.errorRatePp as number, 9);
    expectWithin(fast?.bias.p99Pct, truth.p99Pct);
    expectWithin(fast?.bias.usersPct, truth.usersPct);
    // The seeded data: the fast policy misses the late tail, which fails more often.
    expect(truth.countPct).toBeGreaterThan(3);
    expect(truth.errorRatePp).toBeLessThan(-1);
    expect(exact?.bias).toMatchObject({ countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 4 });
    // panes carry the bias measured so far: it starts unknown and fills in as the reference closes windows.
    const fastPanes = out.panes.filter((p) => p.policy === "fast");
    expect(fastPanes[0]?.bias).toEqual({
      countPct: null,
      errorRatePp: null,
      p99Pct: null,
      usersPct: null,
      windows: 0,
      spread: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null },
      stage: "final",
      scope: "policy",
      provisional: false,
    });
    const seen = fastPanes.map((p) => p.bias.windows);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1] as number);
    expect(fastPanes.some((p) => (p.bias.countPct ?? 0) > 3)).toBe(true);
    // Emit delay: each final pane fires at the first log time past end + lag; the status mean is per window.
    for (const [p, lagMs] of [
      [fast, 2000],
      [exact, 90_000],
    ] as const) {
      const delays = bruteForceEmitDelays(events, 60_000, { lagMs, graceMs: 0 });
      const name = p?.name;
      const panes = out.panes.filter((x) => x.policy === name);
      expect(new Set(panes.map((x) => x.window.start))).toEqual(new Set(delays.keys()));
      for (const x of panes) expect(x.emitDelayMs).toBe(delays.get(x.window.start));
      expect(p?.emitDelayMs).toBeCloseTo([...delays.values()].reduce((a, b) => a + b, 0) / delays.size, 9);
    }
  });

  it("the bias is the mean over the last biasWindows windows only", () => {
    const core = createCore(
      validateCoreConfig({
        partitions: 1,
        windows: ["30s"],
        policies: [{ name: "fast", watermark: { kind: "arrival-lag", lag: "1s" }, mode: "final-only" }],
        referenceHorizon: "2m",
        biasWindows: 2,
      }),
    );
    const out = capture();
    for (const e of events) core.event(0, e, out);
    const all = bruteForceBias(events, 30_000, { lagMs: 1000, graceMs: 0 }, 120_000, 30, SKETCH_ERROR);
    const last = bruteForceBias(events, 30_000, { lagMs: 1000, graceMs: 0 }, 120_000, 2, SKETCH_ERROR);
    expect(all.windows).toBeGreaterThan(2);
    expect(last.countPct).not.toBeCloseTo(all.countPct as number, 3);
    const bias = core.status().policies[0]?.bias;
    expect(bias?.windows).toBe(2);
    expect(bias?.countPct).toBeCloseTo(last.countPct as number, 9);
    expect(bias?.errorRatePp).toBeCloseTo(last.errorRatePp as number, 9);
    expectWithin(bias?.p99Pct, last.p99Pct);
    expectWithin(bias?.usersPct, last.usersPct);
  });
});
