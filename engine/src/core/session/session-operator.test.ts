/**
 * The session operator's rules one at a time (docs/semantics.md, "Session windows"): a late event
 * that bridges two sessions joins them and the cells retract the two and count one; the key cap
 * counts the events it refuses; the key TTL frees a session an event-time policy would hold forever;
 * a (service, user) with one open session costs a bounded number of bytes in the store's tables.
 */
import { describe, expect, it } from "vitest";
import type { LateRecord, Pane, TelemetryEvent } from "../../protocol.js";
import { defaultCoreConfig } from "../default-config.js";
import { simulate } from "../simulation.js";
import { SNAPSHOT_CAPTURED, type CoreConfig, type PolicyConfig } from "../types.js";
import { createSessionOperator, type SessionCore } from "./index.js";

const T = 1_767_225_600_000;
const GAP = 10_000;

function policy(
  name: string,
  mode: PolicyConfig["mode"],
  lagMs: number,
  graceMs: number,
  late: number | null,
): PolicyConfig {
  return {
    name,
    label: name,
    watermark: { kind: "arrival-lag", lagMs },
    graceMs,
    earlyEveryMs: null,
    lateEveryMs: late,
    mode,
  };
}

function config(policies: PolicyConfig[], over: Partial<CoreConfig> = {}): CoreConfig {
  return {
    ...defaultCoreConfig(),
    partitions: 1,
    windows: [{ kind: "tumbling", sizeMs: 60_000 }],
    policies,
    referenceHorizonMs: 120_000,
    ...over,
  };
}

function event(ts: number, arrival: number, user = "ann", status = 200): TelemetryEvent {
  return { ts, ingest_ts: arrival, service: "shop", route: "/", status, latency_ms: 1, user };
}

function recorder(): {
  out: { pane: (p: Pane) => void; late: (r: LateRecord) => void };
  panes: Pane[];
  late: LateRecord[];
} {
  const panes: Pane[] = [];
  const late: LateRecord[] = [];
  return { panes, late, out: { pane: (p) => panes.push(p), late: (r) => late.push(r) } };
}

describe("session operator", () => {
  it("a late event bridging two sessions joins them: the cell retracts the two and counts one", () => {
    const op = createSessionOperator(config([policy("alert", "retracting", 1_000, 120_000, 1_000)]), { gap: GAP });
    const r = recorder();
    // Two sessions of ann, 15 s apart (more than the gap), both ending in the window [T, T + 60 s).
    op.event(0, event(T + 1_000, T + 1_000), r.out);
    op.event(0, event(T + 16_000, T + 16_000, "ann", 503), r.out);
    // W passes the window's end (T + 60 s): on-time pane, 2 sessions.
    op.heartbeat(0, T + 61_500, r.out);
    const onTime = r.panes.filter((p) => p.kind === "on-time");
    expect(onTime.map((p) => [p.id, p.value.count, p.value.errors, p.sessions?.events])).toEqual([
      [`alert|sessions:shop|60000|${T}`, 2, 1, 2],
    ]);
    // A late event between them (ts T+8.5 s, arriving at T+62 s) bridges them into one session.
    op.event(0, event(T + 8_500, T + 62_000), r.out);
    op.heartbeat(0, T + 63_500, r.out);
    const after = r.panes.slice(r.panes.indexOf(onTime[0] as Pane) + 1);
    expect(after.map((p) => [p.kind, p.value.count, p.value.errors, p.sessions?.events])).toEqual([
      ["retract", 2, 1, 2],
      ["late", 1, 1, 3],
    ]);
    expect(after[1]?.value.p50).toBe(15_000);
    expect(after[1]?.lateAccepted).toBe(1);
    expect(op.status().joins).toBe(1);
    expect(r.late).toEqual([]);
  });

  it("counts, and does not sessionize, the events of keys past the cap; freed keys make room again", () => {
    const op = createSessionOperator(config([policy("bill", "final-only", 1_000, 0, null)]), { gap: GAP, maxKeys: 3 });
    const r = recorder();
    for (let u = 0; u < 5; u++) op.event(0, event(T + u, T + u, `u${u}`), r.out);
    op.event(0, event(T + 10, T + 10, "u0"), r.out);
    op.event(0, event(T + 11, T + 11, "u4"), r.out);
    expect(op.status()).toMatchObject({ sessionKeys: 3, maxSessionKeys: 3, overflowEvents: 3 });
    // Past the reference horizon and the bounds' purge every key is freed; new users fit again.
    op.heartbeat(0, T + 600_000, r.out);
    expect(op.status()).toMatchObject({ sessionKeys: 0, sessionRows: 0 });
    op.event(0, event(T + 600_000, T + 600_000, "u9"), r.out);
    expect(op.status()).toMatchObject({ sessionKeys: 1, overflowEvents: 3 });
    op.finish(r.out);
    const finals = r.panes.filter((p) => p.kind === "final");
    expect(finals.reduce((n, p) => n + p.value.count, 0)).toBe(4);
    expect(finals.reduce((n, p) => n + (p.sessions?.events ?? 0), 0)).toBe(5);
  });

  it("the key TTL frees a session that an event-time policy whose W stopped would hold forever", () => {
    const bounded: PolicyConfig = {
      ...policy("ev", "accumulating", 0, 0, null),
      watermark: { kind: "bounded", lagMs: 1_000 },
    };
    const op = createSessionOperator(config([bounded], { keyTtlMs: 600_000, idleTimeoutMs: 3_600_000 }), { gap: GAP });
    const r = recorder();
    op.event(0, event(T, T), r.out);
    // Only heartbeats from here: log time moves, the bounded W (max ts − 1 s) does not.
    op.heartbeat(0, T + 200_000, r.out);
    expect(op.status()).toMatchObject({ sessionRows: 1, openSessions: 1 });
    op.heartbeat(0, T + GAP + 600_000, r.out);
    expect(op.status()).toMatchObject({ sessionRows: 0, openSessions: 0 });
  });

  it("a snapshot's steps after SNAPSHOT_CAPTURED encode the cut, whatever input came in meanwhile", () => {
    const events = simulate({ seed: 4, events: 6_000, services: 4, users: 300 });
    const op = createSessionOperator(defaultCoreConfig(), {});
    const r = recorder();
    for (const e of events.slice(0, 3_000)) op.event(0, e, r.out);
    const atCut = op.snapshot();
    const steps = op.snapshotSteps();
    let captured = false;
    let step = steps.next();
    for (; !step.done && !captured; step = steps.next()) captured = step.value === SNAPSHOT_CAPTURED;
    expect(captured).toBe(true);
    // The input resumes: rows, keys, cells and dials all change.
    for (const e of events.slice(3_000)) op.event(0, e, r.out);
    while (!step.done) step = steps.next();
    expect(step.value).toEqual(atCut);
    expect(op.snapshot()).not.toEqual(atCut);
  });

  it("a (service, user) with one open session holds at most 200 bytes of the store's tables", () => {
    const op: SessionCore = createSessionOperator(defaultCoreConfig(), {});
    const r = recorder();
    const keys = 50_000;
    for (let i = 0; i < keys; i++)
      op.event(0, event(T + Math.floor(i / 10), T + Math.floor(i / 10), `user-${i}`), r.out);
    const s = op.status();
    expect(s.sessionKeys).toBe(keys);
    expect(s.sessionRows).toBe(keys);
    // Typed arrays and timer queues, spare capacity included; the users' strings (about 44 bytes each
    // on the JS heap) come on top: engine/BENCHMARKS.md, "Sessions", measures the whole.
    expect(s.sessionStoreBytes / keys).toBeLessThanOrEqual(156);
  });
});
