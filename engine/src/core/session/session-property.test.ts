/**
 * The session operator against an independent per-policy sessionizer (__fixtures__/naive-sessionizer.ts)
 * on random streams with late, out-of-order and paused input and four policies of different lags,
 * graces and modes: every policy's final cells, its dropped events and its on-time panes are the
 * oracle's; and a restore from a snapshot taken anywhere continues byte for byte.
 */
import { describe, expect, it } from "vitest";
import type { LateRecord, Pane, TelemetryEvent } from "../../protocol.js";
import { defaultCoreConfig } from "../default-config.js";
import { Prng } from "../prng.js";
import type { CoreConfig, CoreOutput, PolicyConfig } from "../types.js";
import { arrivalSteps, type ArrivalDraw, type Step } from "./__fixtures__/arrival-steps.js";
import { naiveSessions } from "./__fixtures__/naive-sessionizer.js";
import { heldCells, offlineCells } from "./__fixtures__/session-oracle.js";
import { createSessionOperator, restoreSessionOperator, type SessionCore } from "./index.js";

const GAP = 3_000;
const CAP = 20_000;
const SIZES = [2_000, 5_000];

const policy = (
  name: string,
  lagMs: number,
  graceMs: number,
  mode: PolicyConfig["mode"],
  early: number | null,
  late: number | null,
): PolicyConfig => ({
  name,
  label: name,
  watermark: { kind: "arrival-lag", lagMs },
  graceMs,
  earlyEveryMs: early,
  lateEveryMs: late,
  mode,
});

const POLICIES = [
  policy("fast", 1_000, 0, "accumulating", 500, null),
  policy("alert", 3_000, 4_000, "retracting", 1_000, 500),
  policy("bill", 2_000, 10_000, "final-only", null, null),
  policy("delta", 5_000, 2_000, "discarding", 1_000, 1_000),
];

function config(): CoreConfig {
  return {
    ...defaultCoreConfig(),
    partitions: 1,
    windows: SIZES.map((sizeMs) => ({ kind: "tumbling" as const, sizeMs })),
    policies: POLICIES,
    referenceHorizonMs: 15_000,
  };
}

const SETTINGS = { gap: GAP, maxLength: CAP };

function draw(seed: number): Step[] {
  const rng = new Prng(seed);
  const n = 40 + rng.int(160);
  const raw: ArrivalDraw[] = [];
  for (let i = 0; i < n; i++) {
    const late = rng.next() < 0.2;
    raw.push({
      ts: 1_000_000 + rng.int(60_000),
      delay: late ? rng.int(20_000) : rng.int(800),
      pause: rng.next() < 0.03 ? rng.int(30_000) : 0,
      service: `s${rng.int(2)}`,
      route: `/r${rng.int(3)}`,
      status: rng.next() < 0.15 ? 500 : 200,
      user: rng.next() < 0.05 ? "" : `u${rng.int(4)}`,
    });
  }
  return arrivalSteps(raw);
}

interface Run {
  panes: Pane[];
  late: LateRecord[];
  /** Panes emitted before finish(). */
  live: number;
}

function feed(op: SessionCore, steps: readonly Step[], out: CoreOutput): void {
  for (const s of steps) {
    if (typeof s === "number") op.heartbeat(0, s, out);
    else op.event(0, s, out);
  }
}

function run(steps: readonly Step[], cut?: number): Run & { snapshot: Uint8Array } {
  const panes: Pane[] = [];
  const late: LateRecord[] = [];
  const out = { pane: (p: Pane) => panes.push(p), late: (r: LateRecord) => late.push(r) };
  let op = createSessionOperator(config(), SETTINGS);
  if (cut === undefined) feed(op, steps, out);
  else {
    feed(op, steps.slice(0, cut), out);
    op = restoreSessionOperator(config(), SETTINGS, op.snapshot());
    feed(op, steps.slice(cut), out);
  }
  const snapshot = op.snapshot();
  const live = panes.length;
  op.finish(out);
  return { panes, late, live, snapshot };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.floor(q * (sorted.length - 1))] as number;
}

function checkAgainstOracle(steps: readonly Step[], r: Run): void {
  const naive = naiveSessions(steps, POLICIES, GAP, CAP, SIZES);
  POLICIES.forEach((p, i) => {
    const mine = r.panes.filter((x) => x.policy === p.name);
    const held = heldCells(mine, p.mode).filter((c) => c.count !== 0);
    const expected = SIZES.flatMap((size) =>
      offlineCells(naive.finals[i] ?? [], size).map((c) => ({
        service: c.service,
        sizeMs: size,
        start: c.start,
        count: c.count,
        errors: c.errors,
        events: c.events,
        p50: quantile(c.durations, 0.5),
        p99: quantile(c.durations, 0.99),
      })),
    );
    expect(
      held.map(({ kind: _k, ...c }) => c),
      `${p.name} final cells`,
    ).toEqual(expected);
    const dropped = r.late.filter((x) => x.policy === p.name).map((x) => x.event);
    expect(dropped, `${p.name} drops`).toEqual(naive.dropped[i]);
    if (p.mode === "final-only") return;
    // What a consumer holds of each cell at its on-time pane (discarding: the deltas summed up to it).
    const onTime = new Map<string, number>();
    const sums = new Map<string, number>();
    for (const x of r.panes.slice(0, r.live)) {
      if (x.policy !== p.name || x.kind === "retract") continue;
      const held = x.value.count + (p.mode === "discarding" ? (sums.get(x.id) ?? 0) : 0);
      sums.set(x.id, held);
      if (x.kind === "on-time") onTime.set(`${x.window.end - x.window.start}|${x.key.service}|${x.window.start}`, held);
    }
    const want = naive.onTime[i] as Map<string, number>;
    for (const [key, count] of onTime) expect(count, `${p.name} on-time ${key}`).toBe(want.get(key) ?? 0);
    for (const [key, count] of want) if (!onTime.has(key)) expect(count, `${p.name} on-time ${key} missing`).toBe(0);
  });
}

describe("session cells vs a per-policy sessionizer", { timeout: 60_000 }, () => {
  it("final cells, drops and on-time panes of every policy are the oracle's, on 300 random streams", () => {
    let retracts = 0;
    let drops = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const steps = draw(seed);
      const r = run(steps);
      checkAgainstOracle(steps, r);
      drops += r.late.length;
      retracts += r.panes.filter((p) => p.kind === "retract").length;
    }
    // The streams do exercise drops and retractions.
    expect(drops).toBeGreaterThan(100);
    expect(retracts).toBeGreaterThan(100);
  });

  it("a restore from a snapshot taken anywhere continues with the same panes, late records and state", () => {
    for (let seed = 1; seed <= 150; seed++) {
      const steps = draw(seed);
      const whole = run(steps);
      const cut = new Prng(seed * 7 + 1).int(steps.length + 1);
      const resumed = run(steps, cut);
      expect(resumed.panes, `seed ${seed} cut ${cut}`).toEqual(whole.panes);
      expect(resumed.late).toEqual(whole.late);
      expect(resumed.snapshot).toEqual(whole.snapshot);
    }
  });

  it("the stream's events are all accounted for: kept by the reference or anonymous", () => {
    const steps = draw(5);
    const op = createSessionOperator(config(), SETTINGS);
    feed(op, steps, { pane: () => undefined, late: () => undefined });
    const events = steps.filter((s): s is TelemetryEvent => typeof s !== "number");
    expect(op.status().eventsTotal).toBe(events.length);
    expect(op.status().anonymousEvents).toBe(events.filter((e) => e.user === "").length);
  });
});
