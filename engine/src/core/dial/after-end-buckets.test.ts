/**
 * Early panes after the window's end are measured per early interval (docs/semantics.md,
 * "Measured bias"): with correlated lateness — errors on time, successes 6 s late, every settled
 * 10 s window at exactly 15 % errors — an alerting-like policy (lag 10 s, early every 5 s) shows
 * each window twice after its end, at 0 s (errors all in, 40 % of the successes: reads ~31 %) and at
 * 5 s (90 % of the successes: ~16 %). Pooled into one bucket, the bias of the 5 s pane was applied
 * to the 0 s one, which stayed far above a 20 % threshold (corrected to ~29 %). Per bucket, after
 * warm-up the corrected value (nowcast) of each early pane is within its bias interval of the true
 * settled ratio, brute-forced from the raw events.
 */
import { describe, expect, it } from "vitest";
import type { Pane, TelemetryEvent } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { validateCoreConfig } from "../validate-config.js";

const T0 = 1_767_225_600_000;
const WINDOW = 10_000;
const WINDOWS = 60;
const PER_WINDOW = 200;

const config = validateCoreConfig({
  partitions: 1,
  windows: ["10s"],
  policies: [
    {
      name: "alerting",
      watermark: { kind: "arrival-lag", lag: "10s" },
      grace: "30s",
      earlyEvery: "5s",
      lateEvery: "1s",
      mode: "retracting",
    },
  ],
  referenceHorizon: "45s",
});

/** Evenly spaced requests; 3 in 20 fail and arrive 50 ms after they happen, the rest 6 s after. */
function stream(): TelemetryEvent[] {
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < WINDOWS * PER_WINDOW; i++) {
    const ts = T0 + i * (WINDOW / PER_WINDOW);
    const error = i % 20 < 3;
    out.push({
      ts,
      ingest_ts: ts + (error ? 50 : 6_000),
      service: "checkout",
      route: "/pay",
      status: error ? 503 : 200,
      latency_ms: 40,
      user: `u${i % 50}`,
    });
  }
  return out.sort((a, b) => a.ingest_ts - b.ingest_ts);
}

describe("early panes after the window's end, one bias per early interval", () => {
  const events = stream();
  const out = capture();
  const core = createCore(config);
  for (const e of events) core.event(0, e, out);
  core.finish(out);
  // Brute force: each window's settled error ratio over every raw event of it.
  const truth = new Map<number, { n: number; errors: number }>();
  for (const e of events) {
    const start = Math.floor(e.ts / WINDOW) * WINDOW;
    const t = truth.get(start) ?? { n: 0, errors: 0 };
    t.n++;
    if (e.status >= 500) t.errors++;
    truth.set(start, t);
  }
  const ratioOf = (p: Pane): number => {
    const t = truth.get(p.window.start)!;
    return t.errors / t.n;
  };
  const afterEnd = out.panes.filter(
    (p) => p.kind === "early" && p.key.route === undefined && p.emittedAt >= p.window.end,
  );
  const measured = afterEnd.filter((p) => !p.bias.provisional && p.bias.windows >= 2 && p.nowcast !== undefined);

  it("shows every window at 0 s and 5 s after its end, reading high, in buckets of their own", () => {
    expect([...truth.values()].every((t) => t.errors / t.n === 0.15)).toBe(true);
    const byAge = new Map<string, Pane[]>();
    for (const p of measured) byAge.set(p.bias.age as string, [...(byAge.get(p.bias.age as string) ?? []), p]);
    expect([...byAge.keys()].sort()).toEqual(["1+0", "1+1"]);
    // The first at the early tick of the window's end (log time moves with the next arrival), the next 5 s on.
    for (const p of byAge.get("1+0")!) expect(p.emittedAt - p.window.end).toBeLessThan(5_000);
    for (const p of byAge.get("1+1")!) expect(p.emittedAt - p.window.end).toBeGreaterThanOrEqual(5_000);
    expect(byAge.get("1+0")!.length).toBeGreaterThan(20);
    expect(byAge.get("1+1")!.length).toBeGreaterThan(20);
    // The raw reading of the first is far above a 20 % threshold; the truth is 15 %.
    expect(Math.min(...byAge.get("1+0")!.map((p) => p.value.errorRate))).toBeGreaterThan(0.3);
  });

  it("after warm-up corrects each early pane to within its bias interval of the true settled ratio", () => {
    const off = measured
      .map((p) => {
        const nowcast = p.nowcast!;
        const miss = Math.abs(nowcast.value.errorRate - ratioOf(p));
        return {
          age: p.bias.age,
          start: p.window.start,
          corrected: nowcast.value.errorRate,
          miss,
          within: nowcast.spread.errorRate,
        };
      })
      .filter((x) => x.within === null || x.miss > x.within + 1e-12);
    expect(off.slice(0, 3)).toEqual([]);
    expect(measured.every((p) => p.nowcast!.value.errorRate < 0.2)).toBe(true);
  });
});
