/**
 * The final state reached through retractions equals an independent offline sessionizer over the
 * complete data (docs/semantics.md, "Session windows"), on simulated recordings whose late tail
 * bridges sessions.
 */
import { DDSketch } from "@tidemark/sketches";
import { describe, expect, it } from "vitest";
import type { LateRecord, Pane, TelemetryEvent } from "../../protocol.js";
import { defaultCoreConfig } from "../default-config.js";
import { simulate } from "../simulation.js";
import type { AccumulationMode, CoreConfig, PolicyConfig } from "../types.js";
import { bruteForce as offline, upsertTable, type Final } from "./__fixtures__/session-oracle.js";
import { createSessionOperator, SessionMetrics } from "./index.js";

const GAP = 20_000;
const CAP = 120_000;
const WINDOW = 30_000;

const bruteForce = (events: readonly TelemetryEvent[]): Final[] => offline(events, GAP, CAP);

function keepEverything(mode: AccumulationMode): PolicyConfig {
  return {
    name: "keep",
    label: "keep everything",
    watermark: { kind: "arrival-lag", lagMs: 5_000 },
    graceMs: 3_600_000,
    earlyEveryMs: 2_000,
    lateEveryMs: 1_000,
    mode,
  };
}

function config(policies: PolicyConfig[]): CoreConfig {
  return { ...defaultCoreConfig(), partitions: 1, policies };
}

function recording(seed: number): TelemetryEvent[] {
  // ~12 events per (service, user) over 10 min, 8% of them up to 90 s late: late events bridge.
  const events = simulate({ seed, events: 3_000, services: 3, users: 80, tail: 0.08, tailMaxMs: 90_000 });
  return events.map((e, i) => (i % 97 === 0 ? { ...e, user: "" } : e));
}

function run(events: readonly TelemetryEvent[], policies: PolicyConfig[]) {
  const op = createSessionOperator(config(policies), { gap: GAP, maxLength: CAP, metricsWindow: WINDOW });
  const panes: Pane[] = [];
  const late: LateRecord[] = [];
  const out = { pane: (p: Pane) => panes.push(p), late: (r: LateRecord) => late.push(r) };
  for (const e of events) op.event(0, e, out);
  op.finish(out);
  return { panes, late, status: op.status() };
}

describe("session operator vs an offline sessionizer", { timeout: 30_000 }, () => {
  for (const mode of ["retracting", "accumulating", "discarding"] as const) {
    it(`${mode}: the pane stream applied to an upsert table gives exactly the offline sessions`, () => {
      for (const seed of [1, 2, 3]) {
        const events = recording(seed);
        const { panes, late, status } = run(events, [keepEverything(mode)]);
        expect(late).toEqual([]);
        expect(status.merges).toBeGreaterThan(0);
        expect(status.anonymousEvents).toBeGreaterThan(0);
        // Retractions that are an id's last word: sessions swallowed by a merge (or renamed).
        const lastKind = new Map(panes.map((p) => [p.id, p.kind]));
        const swallowed = [...lastKind.values()].filter((k) => k === "retract");
        expect(swallowed.length).toBeGreaterThan(0);
        const truth = bruteForce(events);
        // Some sessions were cut by the length cap: the next one of the key starts less than a gap later.
        expect(
          truth.some((s, i) => {
            const n = truth[i + 1];
            return n?.user === s.user && n.service === s.service && n.start < s.end;
          }),
        ).toBe(true);
        expect(upsertTable(panes, mode)).toEqual(truth);
      }
    });
  }

  it.each(["retracting", "accumulating", "discarding"] as const)(
    "%s: derived per-service metrics equal the offline ones; a sink that ignores retractions over-counts",
    (mode) => {
      const events = recording(7);
      const policy = keepEverything(mode);
      const { panes } = run(events, [policy]);
      const metrics = new SessionMetrics({ windowMs: WINDOW, policies: [policy] });
      const naive = new Map<string, Pane>();
      for (const p of panes) {
        expect(metrics.apply(p)).toBe(true);
        if (p.kind !== "retract") naive.set(p.id, p);
      }
      const truth = bruteForce(events);
      expect(metrics.size).toBe(truth.length);
      expect(naive.size).toBeGreaterThan(truth.length);
      const cells = new Map<string, Final[]>();
      for (const s of truth) {
        const k = `${s.service}|${Math.floor(s.end / WINDOW) * WINDOW}`;
        cells.set(k, [...(cells.get(k) ?? []), s]);
      }
      const rows = metrics.rows();
      expect(rows.length).toBe(cells.size);
      for (const row of rows) {
        const list = cells.get(`${row.service}|${row.window.start}`) ?? [];
        expect(row.value.count).toBe(list.length);
        expect(row.value.errors).toBe(list.filter((s) => s.errors > 0).length);
        expect(row.value.errorRate).toBeCloseTo(list.filter((s) => s.errors > 0).length / list.length, 12);
        expect(row.value.users).toBe(new Set(list.map((s) => s.user)).size);
        // The oracle is the sorted durations: the element of rank ⌊q·(n−1)⌋, within the relative
        // accuracy α = 0.01 (ADR 0003, "Two forms of DDSketch").
        const sorted = list.map((s) => s.durationMs).sort((a, b) => a - b);
        const quantiles = [
          [0.5, row.value.p50],
          [0.9, row.value.p90],
          [0.95, row.value.p95],
          [0.99, row.value.p99],
          [0.999, row.value.p999],
        ] as const;
        for (const [q, got] of quantiles) {
          const exact = sorted[Math.floor(q * (sorted.length - 1))] as number;
          expect(Math.abs(got - exact)).toBeLessThanOrEqual(0.01 * exact + 1e-9);
        }
        // Not an oracle, a pin: removals leave the bins a fresh sketch of the same durations has.
        const sketch = new DDSketch({ relativeAccuracy: 0.01 });
        for (const d of sorted) sketch.add(d);
        for (const [q, got] of quantiles) expect(got).toBe(sketch.quantile(q));
      }
    },
  );

  it("a fast policy drops the late tail; what it keeps is still a consistent session table", () => {
    const events = recording(11);
    const fast: PolicyConfig = {
      name: "fast",
      label: "fast",
      watermark: { kind: "arrival-lag", lagMs: 2_000 },
      graceMs: 5_000,
      earlyEveryMs: 1_000,
      lateEveryMs: 1_000,
      mode: "retracting",
    };
    const { panes, late, status } = run(events, [fast]);
    expect(late.length).toBeGreaterThan(0);
    expect(status.policies[0]?.droppedWindowEvents).toBe(late.length);
    expect(status.policies[0]?.droppedEvents).toBe(late.length);
    const kept = new Set(events);
    for (const r of late) kept.delete(r.event);
    // Every dropped event is behind W by more than the grace for the session it would have joined.
    for (const r of late) expect(r.window.end + fast.graceMs).toBeLessThanOrEqual(r.watermark);
    const table = upsertTable(panes, "retracting");
    expect(table.reduce((n, s) => n + s.count, 0)).toBe([...kept].filter((e) => e.user !== "").length);

    // Measured bias: per metrics window (by session end), the policy's sessions vs the reference's,
    // which keeps everything here (horizon 300 s > the 90 s tail), so the offline sessions.
    const perWindow = (list: Final[]) => {
      const m = new Map<number, { n: number; err: number }>();
      for (const s of list) {
        const w = Math.floor(s.end / WINDOW) * WINDOW;
        const c = m.get(w) ?? { n: 0, err: 0 };
        c.n++;
        if (s.errors > 0) c.err++;
        m.set(w, c);
      }
      return m;
    };
    const truth = perWindow(bruteForce(events));
    const got = perWindow(table);
    const countPct: number[] = [];
    const errorPp: number[] = [];
    for (const [w, t] of truth) {
      const f = got.get(w) ?? { n: 0, err: 0 };
      countPct.push((100 * (t.n - f.n)) / t.n);
      if (f.n > 0) errorPp.push(100 * (f.err / f.n - t.err / t.n));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const bias = status.policies[0]?.bias;
    expect(truth.size).toBeLessThanOrEqual(30);
    expect(bias?.windows).toBe(truth.size);
    expect(bias?.countPct).toBeGreaterThan(0);
    expect(bias?.countPct).toBeCloseTo(mean(countPct), 9);
    expect(bias?.errorRatePp).toBeCloseTo(mean(errorPp), 9);
    expect(bias?.p99Pct).toBeNull();
    expect(bias?.usersPct).toBeNull();
  });

  it("a policy that keeps everything measures no bias", () => {
    const { status } = run(recording(4), [keepEverything("accumulating")]);
    const bias = status.policies[0]?.bias;
    expect(bias?.windows).toBeGreaterThan(10);
    expect([bias?.countPct, bias?.errorRatePp]).toEqual([0, 0]);
  });
});
