/**
 * Honest burn rates on the real engine core (docs/slo.md, "Burn rates"): a stream where one
 * service's delayed events fail far more often (correlated lateness) runs through the engine's
 * core; its panes — with the bias and nowcast the core measures — feed the SLO book. Oracle: the
 * error ratio of each window written here from the raw events alone (every event: what the
 * reference holds; those on time for the policy: what the policy shows).
 */
import { createCore, simulate, validateCoreConfig, withCorrelatedFailures } from "@tidemark/engine/core";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { describe, expect, it } from "vitest";
import type { AlertNotice } from "../rules/index.js";
import type { TierVerdict } from "./burn-rate.js";
import { SloBook } from "./slo-book.js";
import { parseSlos, type SloDefinition } from "./slo-config.js";

const W = 10_000;
const LAG = 2_000; // the dashboard policy: arrival-lag 2 s, grace 0
const LONG = 5 * 60_000;
const SHORT = 60_000;
const FACTOR = 14.4;
const STREAM = withCorrelatedFailures(simulate({ seed: 7, events: 48_000, spanMs: 1_200_000, services: 4 }), {
  service: "c",
  minDelayMs: 2_000,
  failRate: 0.3,
  seed: 8,
});
const config = validateCoreConfig({ partitions: 1 });
const START = Math.floor(Math.min(...STREAM.map((e) => e.ts)) / W) * W;

/** Brute force over the raw events of service c in windows ending in (t − span, t]. */
function ratio(t: number, span: number, onTimeOnly: boolean): number {
  let n = 0;
  let e = 0;
  for (const x of STREAM) {
    if (x.service !== "c") continue;
    const end = Math.floor(x.ts / W) * W + W;
    if (end <= t - span || end > t) continue;
    if (onTimeOnly && x.ingest_ts >= end + LAG) continue;
    n++;
    if (x.status >= 500) e++;
  }
  return e / n;
}

/** Past the reference horizon and a long window: the bias is measured there. */
const WARM = START + config.referenceHorizonMs + LONG + 2 * 60_000;
const LAST = START + 1_200_000 - W;
const ends = Array.from({ length: (LAST - WARM) / W + 1 }, (_, i) => WARM + i * W);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const rawRatio = mean(ends.map((t) => ratio(t, LONG, true)));
const trueRatio = mean(ends.map((t) => ratio(t, LONG, false)));
/** The objective that puts the page factor halfway between what the policy shows and the truth. */
const OBJECTIVE = 1 - (rawRatio + trueRatio) / 2 / FACTOR;

function slo(): SloDefinition {
  const [s] = parseSlos(
    [
      {
        name: "c-availability",
        service: "c",
        objective: OBJECTIVE,
        policy: "dashboard",
        tiers: [{ severity: "page", long: "5m", short: "1m", factor: FACTOR }],
      },
    ],
    { policies: ["dashboard", "alerting", "billing"], windowsMs: [W, 60_000] },
    "test",
  );
  return s as SloDefinition;
}

describe("honest burn rates on the engine core's panes", () => {
  it("with correlated lateness the raw burn rate stays under the page factor, the corrected one crosses and agrees with the events", () => {
    expect(trueRatio - rawRatio).toBeGreaterThan(0.01);
    const fired: Array<{ notice: AlertNotice; end: number }> = [];
    const state: { firing: boolean; latest: AlertNotice | undefined } = { firing: false, latest: undefined };
    const book = new SloBook([slo()], "http://dash", {
      fired: (n) => {
        fired.push({ notice: n, end: book.slos()[0]?.newestEnd ?? NaN });
        Object.assign(state, { firing: true, latest: n });
      },
      updated: (n) => void (state.latest = n),
      ended: () => void (state.firing = false),
    });
    const core = createCore(config);
    const readings: Array<{ end: number; v: TierVerdict }> = [];
    const wanted = new Set(ends);
    const out = {
      pane: (p: Pane) => {
        if (!book.offer(p)) return;
        book.flush();
        if (p.key.service !== "c" || p.kind !== "on-time" || !wanted.has(p.window.end)) return;
        const v = book.read("c-availability", p.window.end)?.verdicts[0];

        if (v) readings.push({ end: p.window.end, v });
      },
      late: () => undefined,
    };
    for (const e of STREAM as TelemetryEvent[]) core.event(0, e, out);
    const budget = 1 - OBJECTIVE;
    expect(readings.length).toBe(ends.length);
    let inside = 0;
    let corrErr = 0;
    let rawErr = 0;
    let halfWidths = 0;
    for (const { end, v } of readings) {
      const events = ratio(end, LONG, false) / budget;
      // The policy's own figure is the events it had on time: exact.
      expect(v.long.raw).toBeCloseTo(ratio(end, LONG, true) / budget, 9);
      expect(v.short.raw).toBeCloseTo(ratio(end, SHORT, true) / budget, 9);
      // Alone it would not page; corrected, it does — as the events say it should.
      expect(v.long.raw).toBeLessThan(FACTOR);
      expect(v.long.corrected).toBeGreaterThan(FACTOR);
      expect(events).toBeGreaterThan(FACTOR);
      expect(v.long.halfWidth).not.toBeNull();
      const hw = v.long.halfWidth as number;
      if (Math.abs(v.long.corrected - events) <= hw) inside++;
      corrErr += Math.abs(v.long.corrected - events);
      rawErr += Math.abs(v.long.raw - events);
      halfWidths += hw;
    }
    const n = readings.length;
    console.log(
      `c over ${n} ends: |corrected − events| ${(corrErr / n).toFixed(3)}, |raw − events| ${(rawErr / n).toFixed(3)}, mean half-width ${(halfWidths / n).toFixed(3)}, inside ${inside}`,
    );
    // The corrected burn rate is within its interval of the events' on average, the raw one far outside.
    expect(corrErr / n).toBeLessThan(halfWidths / n);
    expect(rawErr / n).toBeGreaterThan(2 * (halfWidths / n));
    // The interval is the bias mean's, not the window's own sampling noise (docs/slo.md, "Burn
    // rates"): measured 38 of 48 ends inside on this stream.
    expect(inside / n).toBeGreaterThanOrEqual(0.75);
    // The page is firing at the end of the stream, stating the corrected value and the measured bias.
    expect(state.firing).toBe(true);
    expect(state.latest?.annotations["provisional"]).toBeUndefined();
    expect(Number(state.latest?.annotations["burn_rate_long_raw"])).toBeLessThan(FACTOR);
    expect(Number(state.latest?.annotations["burn_rate_long"]?.split(" ± ")[0])).toBeGreaterThan(FACTOR);
    expect(state.latest?.annotations["bias"]).toMatch(/^-\d/);
  });
});
