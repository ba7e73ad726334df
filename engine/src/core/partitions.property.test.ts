import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capture } from "./__fixtures__/capture.js";
import { createCore, restoreCore } from "./create-core.js";
import type { StreamCore } from "./types.js";
import { validateCoreConfig } from "./validate-config.js";

const T = 1_767_225_600_000;

type Step =
  | { op: "event"; p: number; gap: number; delay: number; svc: number }
  | { op: "beat"; p: number; gap: number }
  /** A long silence of every partition but p (a heartbeat of p after it): others may turn idle. */
  | { op: "quiet"; p: number; gap: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("event" as const),
      p: fc.integer({ min: 0, max: 2 }),
      gap: fc.integer({ min: 0, max: 900 }),
      delay: fc.integer({ min: 0, max: 30_000 }),
      svc: fc.integer({ min: 0, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("beat" as const),
      p: fc.integer({ min: 0, max: 2 }),
      gap: fc.integer({ min: 0, max: 3000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("quiet" as const),
      p: fc.integer({ min: 0, max: 2 }),
      gap: fc.integer({ min: 2000, max: 8000 }),
    }),
  },
);

const config = validateCoreConfig({
  partitions: 3,
  windows: ["4s", { kind: "sliding", size: "6s", slide: "2s" }],
  policies: [
    {
      name: "bounded",
      watermark: { kind: "bounded", lag: "1s" },
      grace: "3s",
      earlyEvery: "1s",
      lateEvery: "500ms",
      mode: "retracting",
    },
    {
      name: "pct",
      watermark: { kind: "percentile", q: 0.8, sample: 20 },
      grace: "2s",
      mode: "discarding",
      lateEvery: "1s",
    },
    { name: "lag", watermark: { kind: "arrival-lag", lag: "2s" }, mode: "accumulating", earlyEvery: "700ms" },
  ],
  referenceHorizon: "40s",
  idleTimeout: "3s",
});

function play(steps: readonly Step[], cut: number) {
  const out = capture();
  let core: StreamCore = createCore(config);
  let t = T + 60_000;
  let events = 0;
  steps.forEach((s, i) => {
    if (i === cut) core = restoreCore(config, core.snapshot());
    t += s.gap;
    if (s.op !== "event") return core.heartbeat(s.p, t, out);
    events++;
    core.event(
      s.p,
      { ts: t - s.delay, ingest_ts: t, service: `s${s.svc}`, route: "/", status: 200, latency_ms: 3, user: "u" },
      out,
    );
  });
  core.finish(out);
  return { out, events, status: core.status() };
}

describe("partitions, idleness and event-time watermarks (property)", () => {
  it("no event is lost: per policy and window size, final service counts plus drops equal the events; restore changes nothing", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 80 }), fc.nat(), (steps, cutSeed) => {
        const whole = play(steps, -1);
        expect(whole.status.openWindows).toBe(0);
        // 4 s tumbling: each event is in one window; 6 s sliding by 2 s: in three.
        for (const [size, copies] of [
          [4000, 1],
          [6000, 3],
        ] as const) {
          for (const policy of ["bounded", "pct", "lag"]) {
            const table = new Map<string, number>();
            for (const p of whole.out.panes) {
              if (
                p.policy !== policy ||
                p.key.route !== undefined ||
                p.window.end - p.window.start !== size ||
                p.kind === "retract"
              )
                continue;
              table.set(p.id, policy === "pct" ? (table.get(p.id) ?? 0) + p.value.count : p.value.count);
            }
            const kept = [...table.values()].reduce((a, b) => a + b, 0);
            const dropped = whole.out.dropped.filter(
              (d) => d.policy === policy && d.window.end - d.window.start === size,
            ).length;
            expect(kept + dropped).toBe(copies * whole.events);
          }
        }
        const again = play(steps, cutSeed % steps.length);
        expect(JSON.stringify([again.out.panes, again.out.dropped])).toBe(
          JSON.stringify([whole.out.panes, whole.out.dropped]),
        );
      }),
      { numRuns: 150, seed: 7 },
    );
  }, 60_000);
});
