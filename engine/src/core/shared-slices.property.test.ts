/**
 * Shared slice grids change no output (docs/decisions/0022-sliced-windows.md): on random streams
 * (late and dropped events, several keys and users, tumbling and sliding configs, restores midway)
 * every pane, late record and policy status (bias, counters) is the same, byte for byte, with the
 * configs sharing one grid and with each keeping its own slices (the `sharedSlices: false` switch).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "../protocol.js";
import { arrivalOrder } from "./__fixtures__/arrival-order.js";
import { capture } from "./__fixtures__/capture.js";
import { createCore, restoreCore } from "./create-core.js";
import type { EventTimeCore } from "./stream-core.js";
import type { AccumulationMode, CoreConfig } from "./types.js";
import { validateCoreConfig } from "./validate-config.js";

const T = 1_767_225_600_000;

const WINDOW_SETS: CoreConfig["windows"][] = [
  [
    { kind: "tumbling", sizeMs: 10_000 },
    { kind: "tumbling", sizeMs: 60_000 },
  ],
  [
    { kind: "tumbling", sizeMs: 60_000 },
    { kind: "tumbling", sizeMs: 10_000 },
  ],
  [
    { kind: "tumbling", sizeMs: 10_000 },
    { kind: "sliding", sizeMs: 60_000, slideMs: 20_000 },
    { kind: "tumbling", sizeMs: 30_000 },
  ],
  [
    { kind: "tumbling", sizeMs: 20_000 },
    { kind: "sliding", sizeMs: 30_000, slideMs: 15_000 },
    { kind: "tumbling", sizeMs: 60_000 },
    { kind: "sliding", sizeMs: 45_000, slideMs: 45_000 },
  ],
];

/** Arrival order; event times up to 90 s behind arrival (late and dropped for the short lags). */
const streamArb = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 0, max: 1_500 }),
      delay: fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 90_000 })),
      svc: fc.integer({ min: 0, max: 3 }),
      route: fc.integer({ min: 0, max: 2 }),
      user: fc.integer({ min: 0, max: 400 }),
      latency: fc.integer({ min: 1, max: 5_000 }),
      err: fc.boolean(),
    }),
    { minLength: 1, maxLength: 250 },
  )
  .map((rows) =>
    arrivalOrder(rows, T + 95_000, (r) => ({
      service: `s${r.svc}`,
      route: `/r${r.route}`,
      status: r.err ? 503 : 200,
      latency_ms: r.latency,
      user: `u${r.user}`,
    })),
  );

const MODES: AccumulationMode[] = ["accumulating", "discarding", "retracting", "final-only"];

const policyArb = fc.record({
  lag: fc.integer({ min: 0, max: 20_000 }),
  grace: fc.integer({ min: 0, max: 30_000 }),
  early: fc.option(fc.integer({ min: 500, max: 6_000 }), { nil: null }),
  late: fc.option(fc.integer({ min: 200, max: 5_000 }), { nil: null }),
  mode: fc.constantFrom(...MODES),
});

type PolicyArb = { lag: number; grace: number; early: number | null; late: number | null; mode: AccumulationMode };

function configOf(windows: CoreConfig["windows"], policies: PolicyArb[]): CoreConfig {
  return validateCoreConfig({
    partitions: 2,
    windows,
    policies: policies.map((p, i) => ({
      name: `p${i}`,
      watermark: { kind: "arrival-lag", lag: p.lag },
      grace: p.grace,
      earlyEvery: p.early,
      lateEvery: p.late,
      mode: p.mode,
    })),
    referenceHorizon: "2m",
    biasWindows: 4,
    relativeAccuracy: 0.02,
    hllPrecision: 8,
  });
}

/** Everything the core emits and its policies' status, as one string. */
function run(config: CoreConfig, events: readonly TelemetryEvent[], sharedSlices: boolean, cut?: number): string {
  const options = { sharedSlices };
  const out = capture();
  let core = createCore(config, options);
  events.forEach((e, i) => {
    if (i === cut) core = restoreCore(config, core.snapshot(), options);
    core.event(e.service === "s0" || e.service === "s2" ? 0 : 1, e, out);
  });
  const mid = JSON.stringify(core.status().policies);
  core.finish(out);
  return JSON.stringify({ panes: out.panes, late: out.dropped, mid, end: core.status().policies });
}

describe("shared slice grids (property)", () => {
  it("give the same panes, late records and bias as a grid per config, restored midway or not", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...WINDOW_SETS),
        fc.array(policyArb, { minLength: 1, maxLength: 3 }),
        streamArb,
        fc.nat(),
        (windows, policies, events, cutSeed) => {
          const config = configOf(windows, policies);
          expect(run(config, events, true)).toBe(run(config, events, false));
          // Against a restore of the same cut: a restored core's early-stage emit delays differ
          // from an unrestored one's (its early marks start over), with or without shared grids.
          const cut = cutSeed % events.length;
          expect(run(config, events, true, cut)).toBe(run(config, events, false, cut));
        },
      ),
      { numRuns: 300, seed: 22 },
    );
  }, 120_000);

  it("the default sizes share one grid: each event updates the 10 s slice only", () => {
    const config = configOf(WINDOW_SETS[0] as CoreConfig["windows"], [
      { lag: 1000, grace: 0, early: null, late: null, mode: "final-only" },
    ]);
    const core = createCore(config) as EventTimeCore;
    const alone = createCore(config, { sharedSlices: false }) as EventTimeCore;
    const out = capture();
    for (let i = 0; i < 50; i++) {
      const e = {
        ts: T + i * 100,
        ingest_ts: T + i * 100,
        service: "a",
        route: "/",
        status: 200,
        latency_ms: 5,
        user: "u",
      };
      core.event(0, e, out);
      alone.event(0, e, out);
    }
    const [ten, sixty] = core.state.windowConfigs;
    expect([ten?.grid, sixty?.grid, ten?.slices.size, sixty?.slices.size]).toEqual([0, 0, 1, 0]);
    expect(sixty?.windows.get(T - (T % 60_000))?.slices.length).toBe(1);
    expect(core.status().stateKeys).toBe(2);
    expect(alone.status().stateKeys).toBe(4);
  });

  it("refuses to restore a snapshot into the other choice of grids", () => {
    const config = configOf(WINDOW_SETS[0] as CoreConfig["windows"], [
      { lag: 1000, grace: 0, early: null, late: null, mode: "final-only" },
    ]);
    const bytes = createCore(config).snapshot();
    let code: string | undefined;
    try {
      restoreCore(config, bytes, { sharedSlices: false });
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).toBe("TM_SNAPSHOT_CONFIG_MISMATCH");
  });
});
