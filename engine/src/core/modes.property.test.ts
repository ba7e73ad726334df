import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Pane, TelemetryEvent } from "../protocol.js";
import { arrivalOrder } from "./__fixtures__/arrival-order.js";
import { capture } from "./__fixtures__/capture.js";
import { createCore, restoreCore } from "./create-core.js";
import type { AccumulationMode } from "./types.js";
import { validateCoreConfig } from "./validate-config.js";

const T = 1_767_225_600_000;

/** Random small streams in arrival order: event times up to 40 s behind arrival. */
const streamArb = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 0, max: 700 }),
      delay: fc.integer({ min: 0, max: 40_000 }),
      svc: fc.integer({ min: 0, max: 2 }),
      err: fc.boolean(),
    }),
    { minLength: 1, maxLength: 120 },
  )
  .map((rows) =>
    arrivalOrder(rows, T + 50_000, (r) => ({
      service: `s${r.svc}`,
      route: `/r${r.svc % 2}`,
      status: r.err ? 500 : 200,
      latency_ms: 5,
      user: "u",
    })),
  );

const policyArb = fc.record({
  lag: fc.integer({ min: 0, max: 8_000 }),
  grace: fc.integer({ min: 0, max: 12_000 }),
  early: fc.option(fc.integer({ min: 200, max: 4_000 }), { nil: null }),
  late: fc.option(fc.integer({ min: 100, max: 3_000 }), { nil: null }),
});

function run(
  events: readonly TelemetryEvent[],
  p: { lag: number; grace: number; early: number | null; late: number | null },
  mode: AccumulationMode,
  cut?: number,
): Pane[] {
  const config = validateCoreConfig({
    partitions: 1,
    windows: ["5s"],
    policies: [
      {
        name: "p",
        watermark: { kind: "arrival-lag", lag: p.lag },
        grace: p.grace,
        earlyEvery: p.early,
        lateEvery: p.late,
        mode,
      },
    ],
    referenceHorizon: "1m",
  });
  const out = capture();
  let core = createCore(config);
  events.forEach((e, i) => {
    if (i === cut) core = restoreCore(config, core.snapshot());
    core.event(0, e, out);
  });
  core.finish(out);
  return out.panes.filter((x) => x.key.route === undefined);
}

/** What an idempotent sink holds per pane id: the last value; for discarding, the sum. */
function sink(panes: readonly Pane[], mode: AccumulationMode): Map<string, [number, number]> {
  const table = new Map<string, [number, number]>();
  for (const p of panes) {
    if (p.kind === "retract") continue;
    const prev = table.get(p.id) ?? [0, 0];
    table.set(
      p.id,
      mode === "discarding" ? [prev[0] + p.value.count, prev[1] + p.value.errors] : [p.value.count, p.value.errors],
    );
  }
  return table;
}

describe("accumulation modes agree (property)", () => {
  it("every mode's sink equals the brute-force kept prefix of each window; panes are well-formed; a restore changes nothing", () => {
    fc.assert(
      fc.property(streamArb, policyArb, fc.nat(), (events, p, cutSeed) => {
        const truth = new Map<string, [number, number]>();
        for (const e of events) {
          const start = Math.floor(e.ts / 5000) * 5000;
          if (e.ingest_ts - p.lag >= start + 5000 + p.grace) continue; // dropped (W >= end + G)
          const id = `p|${e.service}|5000|${start}`;
          const t = truth.get(id) ?? [0, 0];
          truth.set(id, [t[0] + 1, t[1] + (e.status >= 500 ? 1 : 0)]);
        }
        for (const mode of ["accumulating", "discarding", "retracting", "final-only"] as const) {
          const panes = run(events, p, mode);
          expect(sink(panes, mode)).toEqual(truth);
          const byId = new Map<string, Pane[]>();
          for (const x of panes) byId.set(x.id, [...(byId.get(x.id) ?? []), x]);
          for (const list of byId.values()) {
            expect(list.map((x) => x.seq)).toEqual(list.map((_, i) => i));
            expect(list.at(-1)?.kind).toBe(mode === "final-only" || p.grace > 0 ? "final" : "on-time");
            // a key first seen after its window's on-time pane (a late event) has none
            expect(list.filter((x) => x.kind === "on-time").length).toBeLessThanOrEqual(mode === "final-only" ? 0 : 1);
            const kept = list.filter((x) => x.kind !== "retract");
            const kinds = kept.map((x) => x.kind).join(" ");
            if (mode === "final-only") expect(kinds).toBe("final");
            else if (p.grace === 0) expect(kinds).toMatch(/^(early )*on-time$/);
            else expect(kinds).toMatch(/^(early )*(on-time )?(late )*final$/);
            // retracting: every pane after the first is preceded by a retract of the one before
            if (mode === "retracting")
              expect(list.map((x) => x.kind !== "retract")).toEqual(list.map((_, i) => i % 2 === 0));
          }
          const cut = cutSeed % events.length;
          expect(JSON.stringify(run(events, p, mode, cut))).toBe(JSON.stringify(panes));
        }
      }),
      { numRuns: 150, seed: 4 },
    );
  }, 60_000);
});
