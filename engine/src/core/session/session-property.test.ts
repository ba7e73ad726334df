/**
 * Properties over random small recordings (fast-check): for every policy, whatever its watermark,
 * grace, triggers and mode, the pane stream applied to an upsert table is exactly the offline
 * sessionization of the events the policy kept (all events minus its late records); and a
 * snapshot/restore at any point gives byte-identical output.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arrivalSteps, type Step } from "./__fixtures__/arrival-steps.js";
import type { LateRecord, Pane, TelemetryEvent } from "../../protocol.js";
import { defaultCoreConfig } from "../default-config.js";
import type { AccumulationMode, CoreConfig, PolicyConfig } from "../types.js";
import { bruteForce, upsertTable } from "./__fixtures__/session-oracle.js";
import { createSessionOperator, restoreSessionOperator, type SessionCore } from "./index.js";

const GAP = 10_000;
const CAP = 60_000;
const T0 = CAP * 30_000_000;
const SESSIONS = { gap: GAP, maxLength: CAP, metricsWindow: 30_000 };
const MODES: AccumulationMode[] = ["accumulating", "discarding", "retracting", "final-only"];

const eventArb = fc.record({
  service: fc.constantFrom("a", "b"),
  user: fc.constantFrom("u1", "u2", "u3", ""),
  ts: fc.integer({ min: 0, max: 240 }).map((x) => T0 + x * 500),
  delay: fc.oneof(
    fc.integer({ min: 0, max: 4 }).map((x) => x * 500),
    fc.integer({ min: 0, max: 80 }).map((x) => x * 500),
  ),
  route: fc.constantFrom("/a", "/b", "/c"),
  status: fc.constantFrom(200, 200, 500),
  /** Log time jumps this far (a heartbeat) before the event arrives: sessions close, bounds purge. */
  pause: fc.constantFrom(0, 0, 0, 0, 15_000, 45_000),
});

/** An input step: an event, or a heartbeat of the one partition. */

const policyArb = fc.record({
  kind: fc.constantFrom("arrival-lag", "bounded"),
  lag: fc.constantFrom(0, 2_000, 5_000),
  grace: fc.constantFrom(0, 5_000, 20_000),
  early: fc.constantFrom(null, 1_000),
  late: fc.constantFrom(null, 1_000),
  mode: fc.constantFrom(...MODES),
});

type RawEvent = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

/** Events in arrival order (__fixtures__/arrival-steps.ts). */
const recording = (raw: RawEvent[]): Step[] => arrivalSteps(raw);

type PolicyDraw = typeof policyArb extends fc.Arbitrary<infer T> ? T : never;

function config(policies: PolicyDraw[]): CoreConfig {
  const pols: PolicyConfig[] = policies.map((p, i) => ({
    name: `p${i}`,
    label: `p${i}`,
    watermark: { kind: p.kind, lagMs: p.lag } as PolicyConfig["watermark"],
    graceMs: p.grace,
    earlyEveryMs: p.early,
    lateEveryMs: p.late,
    mode: p.mode,
  }));
  return { ...defaultCoreConfig(), partitions: 1, policies: pols, referenceHorizonMs: 30_000, biasWindows: 5 };
}

function drive(op: SessionCore, steps: readonly Step[], out: { pane(p: Pane): void; late(r: LateRecord): void }): void {
  for (const s of steps) {
    if (typeof s === "number") op.heartbeat(0, s, out);
    else op.event(0, s, out);
  }
}

describe("session operator properties", { timeout: 60_000 }, () => {
  it("each policy's final sessions are the offline sessions of the events it kept; restore anywhere is byte-identical", () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { minLength: 1, maxLength: 40 }),
        fc.array(policyArb, { minLength: 1, maxLength: 3 }),
        fc.nat(),
        (raw, policies, cutSeed) => {
          const steps = recording(raw);
          const events = steps.filter((s): s is TelemetryEvent => typeof s !== "number");
          const cfg = config(policies);
          const panes: Pane[] = [];
          const late: LateRecord[] = [];
          const lines: string[] = [];
          const out = {
            pane: (p: Pane) => (panes.push(p), lines.push(JSON.stringify(p))),
            late: (r: LateRecord) => (late.push(r), lines.push(JSON.stringify(r))),
          };
          const op = createSessionOperator(cfg, SESSIONS);
          drive(op, steps, out);
          op.finish(out);
          cfg.policies.forEach((pol) => {
            const dropped = new Set(late.filter((r) => r.policy === pol.name).map((r) => r.event));
            const kept = events.filter((e) => !dropped.has(e));
            expect(
              upsertTable(
                panes.filter((p) => p.policy === pol.name),
                pol.mode,
              ),
            ).toEqual(bruteForce(kept, GAP, CAP));
          });
          const cut = cutSeed % (steps.length + 1);
          const again: string[] = [];
          const out2 = {
            pane: (p: Pane) => void again.push(JSON.stringify(p)),
            late: (r: LateRecord) => void again.push(JSON.stringify(r)),
          };
          const first = createSessionOperator(cfg, SESSIONS);
          drive(first, steps.slice(0, cut), out2);
          const resumed = restoreSessionOperator(cfg, SESSIONS, first.snapshot());
          drive(resumed, steps.slice(cut), out2);
          resumed.finish(out2);
          expect(again).toEqual(lines);
        },
      ),
      { numRuns: 300, seed: 20261201 },
    );
  });
});
