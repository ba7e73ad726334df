/**
 * The shared session store (docs/decisions/0018-shared-sessions.md) against the operator it
 * replaced, one sessionizer per policy (kept as the oracle in __fixtures__/per-policy): on random
 * streams with late and out-of-order events, pauses, and several policies with different
 * watermarks and allowed lateness, both emit the same panes and late records in the same order,
 * and a restore of the shared one anywhere changes nothing. The streams are drawn so that the
 * policies' views differ (one drops what another keeps): the lanes of a key do split.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arrivalSteps, type Step } from "./__fixtures__/arrival-steps.js";
import type { LateRecord, Pane, TelemetryEvent } from "../../protocol.js";
import { crc32 } from "../byte-codec.js";
import { defaultCoreConfig } from "../default-config.js";
import { CoreError } from "../errors.js";
import type { AccumulationMode, CoreConfig, CoreOutput, PolicyConfig } from "../types.js";
import { validateCoreConfig } from "../validate-config.js";
import { createPerPolicyOperator } from "./__fixtures__/per-policy/index.js";
import { restoreSessionOperator, SESSION_SNAPSHOT_VERSION } from "./index.js";
import { validateSessionConfig } from "./session-config.js";
import { SessionOperator } from "./session-operator.js";

const GAP = 10_000;
const CAP = 60_000;
const T0 = CAP * 30_000_000;
const SESSIONS = { gap: GAP, maxLength: CAP, metricsWindow: 30_000 };
const MODES: AccumulationMode[] = ["accumulating", "discarding", "retracting", "final-only"];

const eventArb = fc.record({
  service: fc.constantFrom("a", "b"),
  user: fc.constantFrom("u1", "u2", "u3", ""),
  ts: fc.integer({ min: 0, max: 240 }).map((x) => T0 + x * 500),
  // On time, or around a gap late (the fast policies drop these, the slow ones keep them), or very late.
  delay: fc.oneof(
    fc.integer({ min: 0, max: 4 }).map((x) => x * 500),
    fc.integer({ min: 18, max: 34 }).map((x) => x * 500),
    fc.integer({ min: 0, max: 80 }).map((x) => x * 500),
  ),
  route: fc.constantFrom("/a", "/b", "/c"),
  status: fc.constantFrom(200, 200, 500),
  /** Log time jumps this far (a heartbeat) before the event arrives: sessions close, bounds purge. */
  pause: fc.constantFrom(0, 0, 0, 0, 15_000, 45_000),
  /**
   * A second event of the key less than a gap later that arrives with this one: when this one is
   * too late for a fast policy and the twin is not, the policies' sessions of the key differ.
   */
  twin: fc.option(fc.record({ dt: fc.integer({ min: 1, max: 19 }), after: fc.integer({ min: 0, max: 2 }) }), {
    freq: 2,
  }),
});

const policyArb = fc.record({
  kind: fc.constantFrom("arrival-lag", "arrival-lag", "bounded"),
  lag: fc.constantFrom(0, 0, 2_000, 5_000, 20_000),
  grace: fc.constantFrom(0, 0, 5_000, 20_000, 60_000),
  early: fc.constantFrom(null, 1_000),
  late: fc.constantFrom(null, 1_000),
  mode: fc.constantFrom(...MODES),
});

type RawEvent = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;
type PolicyDraw = typeof policyArb extends fc.Arbitrary<infer T> ? T : never;

/** Events in arrival order; a pause inserts a heartbeat and delays every later arrival by it. */
function recording(draws: RawEvent[]): Step[] {
  const raw = draws.flatMap((r) =>
    r.twin === null
      ? [r]
      : [
          r,
          {
            ...r,
            twin: null,
            pause: 0,
            ts: r.ts + r.twin.dt * 500,
            delay: Math.max(0, r.delay - r.twin.dt * 500 + r.twin.after * 500),
          },
        ],
  );
  return arrivalSteps(raw);
}

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

interface Driven {
  event(partition: number, e: TelemetryEvent, out: CoreOutput): void;
  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void;
}

function drive(op: Driven, steps: readonly Step[], out: CoreOutput, each: () => void = () => {}): void {
  for (const s of steps) {
    if (typeof s === "number") op.heartbeat(0, s, out);
    else op.event(0, s, out);
    each();
  }
}

function recorder(): { lines: string[]; out: CoreOutput } {
  const lines: string[] = [];
  return {
    lines,
    out: {
      pane: (p: Pane) => void lines.push(JSON.stringify(p)),
      late: (r: LateRecord) => void lines.push(JSON.stringify(r)),
    },
  };
}

/** Most lanes any key of the operator holds now. */
function mostLanes(op: SessionOperator): number {
  let most = 0;
  for (const users of op.state.keys.values()) for (const k of users.values()) most = Math.max(most, k.lanes.length);
  return most;
}

/**
 * Runs the per-policy oracle and the shared operator over the same steps; `each` sees the shared
 * operator after every step. Returns both outputs, finished.
 */
function runBoth(
  cfg: CoreConfig,
  steps: readonly Step[],
  each: (op: SessionOperator) => void,
): { oracle: string[]; shared: string[] } {
  const oracle = recorder();
  const perPolicy = createPerPolicyOperator(cfg, SESSIONS);
  drive(perPolicy, steps, oracle.out);
  perPolicy.finish(oracle.out);
  const shared = recorder();
  const op = new SessionOperator(validateCoreConfig(cfg), validateSessionConfig(SESSIONS));
  drive(op, steps, shared.out, () => each(op));
  op.finish(shared.out);
  return { oracle: oracle.lines, shared: shared.lines };
}

describe("shared session store vs one sessionizer per policy", { timeout: 120_000 }, () => {
  it("emits the same panes and late records, in the same order, and restores anywhere unchanged", () => {
    let split = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        fc.array(eventArb, { minLength: 1, maxLength: 60 }),
        fc.array(policyArb, { minLength: 2, maxLength: 4 }),
        fc.nat(),
        (raw, policies, cutSeed) => {
          const steps = recording(raw);
          const cfg = config(policies);
          let lanes = 1;
          const { oracle, shared } = runBoth(cfg, steps, (op) => (lanes = Math.max(lanes, mostLanes(op))));
          expect(shared).toEqual(oracle);
          runs++;
          if (lanes > 1) split++;

          const cut = cutSeed % (steps.length + 1);
          const resumed = recorder();
          const first = new SessionOperator(validateCoreConfig(cfg), validateSessionConfig(SESSIONS));
          drive(first, steps.slice(0, cut), resumed.out);
          const again = restoreSessionOperator(cfg, SESSIONS, first.snapshot());
          drive(again, steps.slice(cut), resumed.out);
          again.finish(resumed.out);
          expect(resumed.lines).toEqual(oracle);
        },
      ),
      { numRuns: 400, seed: 20261202 },
    );
    // The policies' views did differ in many runs, so forks and re-joins of lanes were exercised.
    expect(split).toBeGreaterThan(runs / 10);
  });

  it("splits a key's lane when a fast policy drops an event a slow one keeps, and joins it again", () => {
    const fast: PolicyDraw = { kind: "arrival-lag", lag: 0, grace: 0, early: 1_000, late: 1_000, mode: "retracting" };
    const slow: PolicyDraw = {
      kind: "arrival-lag",
      lag: 20_000,
      grace: 60_000,
      early: 1_000,
      late: null,
      mode: "discarding",
    };
    const cfg = config([fast, slow]);
    const at = (x: number, delay: number): RawEvent => ({
      service: "a",
      user: "u1",
      ts: T0 + x,
      delay,
      route: "/a",
      status: 200,
      pause: 0,
      twin: null,
    });
    // 0 arrives 10 s late: the fast policy drops it, the slow one keeps it; 5 s then joins it for the
    // slow policy only, 8 s joins both; long after, 200 s opens a new session for both.
    const steps = recording([at(0, 10_000), at(5_000, 5_500), at(8_000, 3_000), at(200_000, 0)]);
    const lanes: number[] = [];
    const { oracle, shared } = runBoth(cfg, steps, (op) => lanes.push(mostLanes(op)));
    expect(shared).toEqual(oracle);
    expect(oracle.some((l) => l.includes('"reason":"behind-watermark"'))).toBe(true);
    expect(lanes.slice(0, 3)).toEqual([1, 2, 2]);
    expect(lanes.at(-1)).toBe(1);
  });

  it("refuses a sealed version-4 snapshot (per-policy session lists) with TM_SNAPSHOT_VERSION", () => {
    const cfg = config([
      { kind: "arrival-lag", lag: 2_000, grace: 5_000, early: 1_000, late: null, mode: "retracting" },
    ]);
    const op = new SessionOperator(validateCoreConfig(cfg), validateSessionConfig(SESSIONS));
    const raw = [0, 1, 30].map((x): RawEvent => ({
      service: "a",
      user: "u1",
      ts: T0 + x * 1_000,
      delay: 0,
      route: "/a",
      status: 200,
      pause: 0,
      twin: null,
    }));
    drive(op, recording(raw), recorder().out);
    const bytes = op.snapshot();
    expect(bytes[4]).toBe(SESSION_SNAPSHOT_VERSION);
    const old = bytes.slice();
    old[4] = 4;
    new DataView(old.buffer).setUint32(old.length - 4, crc32(old.subarray(0, old.length - 4)), true);
    let code: string | undefined;
    try {
      restoreSessionOperator(cfg, SESSIONS, old);
    } catch (e) {
      code = e instanceof CoreError ? e.code : String(e);
    }
    expect(code).toBe("TM_SNAPSHOT_VERSION");
    expect(() => restoreSessionOperator(cfg, SESSIONS, bytes)).not.toThrow();
  });
});
