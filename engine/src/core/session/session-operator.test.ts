/** Hand-built session scenarios: every expected value below is worked out by hand. */
import { describe, expect, it } from "vitest";
import type { LateRecord, Pane, TelemetryEvent } from "../../protocol.js";
import { DEFAULT_POLICIES, defaultCoreConfig } from "../default-config.js";
import { ConfigError } from "../errors.js";
import { simulate } from "../simulation.js";
import type { CoreConfig, PolicyConfig } from "../types.js";
import { createSessionOperator } from "./index.js";

/** Aligned to every cap used here. */
const T0 = 14_400_000 * 120;

function ev(ts: number, ingest: number, route: string, status = 200, user = "u"): TelemetryEvent {
  return { ts: T0 + ts, ingest_ts: T0 + ingest, service: "api", route, status, latency_ms: 10, user };
}

function config(policies: PolicyConfig[]): CoreConfig {
  return { ...defaultCoreConfig(), partitions: 1, policies };
}

function harness(policies: PolicyConfig[], sessions: object) {
  const op = createSessionOperator(config(policies), sessions);
  const panes: Pane[] = [];
  const late: LateRecord[] = [];
  const out = { pane: (p: Pane) => panes.push(p), late: (r: LateRecord) => late.push(r) };
  return {
    op,
    panes,
    late,
    event: (e: TelemetryEvent) => op.event(0, e, out),
    beat: (t: number) => op.heartbeat(0, T0 + t, out),
    finish: () => op.finish(out),
  };
}

const brief = (p: Pane) => [
  p.kind,
  p.id,
  p.value.count,
  p.value.errors,
  p.window.start - T0,
  p.window.end - T0,
  p.session?.durationMs,
  p.session?.firstRoute,
  p.session?.lastRoute,
];

const retracting: PolicyConfig = {
  name: "p",
  label: "p",
  watermark: { kind: "arrival-lag", lagMs: 1_000 },
  graceMs: 60_000,
  earlyEveryMs: null,
  lateEveryMs: 1_000,
  mode: "retracting",
};

describe("session operator", { timeout: 30_000 }, () => {
  it("a late bridging event retracts both emitted sessions and emits the merged one", () => {
    const h = harness([retracting], { gap: "10s" });
    h.event(ev(0, 100, "/a"));
    h.event(ev(15_000, 15_100, "/b", 503));
    h.beat(45_000); // W = 44 s: both sessions (ends 10 s, 25 s) are on time
    const id = (start: number) => `p|session:api/u|10000|${T0 + start}`;
    expect(h.panes.map(brief)).toEqual([
      ["on-time", id(0), 1, 0, 0, 10_000, 0, "/a", "/a"],
      ["on-time", id(15_000), 1, 1, 15_000, 25_000, 0, "/b", "/b"],
    ]);
    h.panes.length = 0;
    h.event(ev(8_000, 46_000, "/c")); // 8 s is within 10 s of both: one session 0..15 s, end 25 s <= W: late but within grace
    expect(h.panes.map(brief)).toEqual([
      ["retract", id(15_000), 1, 1, 15_000, 25_000, 0, "/b", "/b"],
      ["retract", id(0), 1, 0, 0, 10_000, 0, "/a", "/a"],
      ["late", id(0), 3, 1, 0, 25_000, 15_000, "/a", "/b"],
    ]);
    expect(h.op.status().merges).toBe(1);
    expect(h.op.status().policies[0]?.lateAcceptedEvents).toBe(1);
    const seqs = h.panes.map((p) => p.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    h.panes.length = 0;
    h.beat(86_000); // W = 85 s = end 25 s + grace 60 s: final, then the policy forgets the session
    expect(h.panes.map(brief)).toEqual([
      ["retract", id(0), 3, 1, 0, 25_000, 15_000, "/a", "/b"],
      ["final", id(0), 3, 1, 0, 25_000, 15_000, "/a", "/b"],
    ]);
    expect(h.op.status().openSessions).toBe(0);
    h.event(ev(20_000, 90_000, "/d")); // would join the closed session (last event 15 s + gap): dropped
    expect(
      h.late.map((r) => [r.policy, r.event.ts - T0, r.window.start - T0, r.window.end - T0, r.watermark - T0]),
    ).toEqual([["p", 20_000, 15_000, 25_000, 89_000]]);
    expect(h.op.status().policies[0]).toMatchObject({ droppedEvents: 1, droppedWindowEvents: 1 });
  });

  it("a swallowed session that never emitted is not retracted; a new first event renames the session", () => {
    const pol: PolicyConfig = { ...retracting, earlyEveryMs: 1_000, mode: "accumulating" };
    const h = harness([pol], { gap: "10s" });
    h.event(ev(20_000, 20_000, "/a"));
    h.beat(21_000); // early tick at 21 s
    const id = (start: number) => `p|session:api/u|10000|${T0 + start}`;
    expect(h.panes.map(brief)).toEqual([["early", id(20_000), 1, 0, 20_000, 30_000, 0, "/a", "/a"]]);
    h.panes.length = 0;
    h.event(ev(12_000, 21_500, "/b")); // earlier first event: the old id goes, the new one comes at once
    expect(h.panes.map(brief)).toEqual([
      ["retract", id(20_000), 1, 0, 20_000, 30_000, 0, "/a", "/a"],
      ["early", id(12_000), 2, 0, 12_000, 30_000, 8_000, "/b", "/a"],
    ]);
  });

  it("a session opened already behind W gets no on-time pane: late, then final, and no on-time delay", () => {
    const pol: PolicyConfig = { ...retracting, mode: "accumulating", graceMs: 20_000 };
    const h = harness([pol], { gap: "10s" });
    h.event(ev(0, 100, "/a"));
    h.beat(11_000); // W = 10 s = end: on-time, 1 s after the end
    const id = (start: number) => `p|session:api/u|10000|${T0 + start}`;
    expect(h.panes.map((p) => [p.kind, p.id, p.emitDelayMs])).toEqual([["on-time", id(0), 1_000]]);
    h.panes.length = 0;
    h.event(ev(30_000, 45_000, "/b")); // a new session [30 s, 40 s) at W = 44 s: late, within grace
    h.event(ev(31_000, 45_200, "/c")); // joins it (end 41 s, still behind W); the late-pane rate limit (1 s) holds it back
    h.beat(46_000); // the late flush: the second late pane
    h.beat(62_000); // W = 61 s = end + grace: final
    expect(h.panes.filter((p) => p.id === id(30_000)).map((p) => [p.kind, p.value.count, p.emitDelayMs])).toEqual([
      ["late", 1, 5_000],
      ["late", 2, 5_000],
      ["final", 2, 21_000],
    ]);
    expect(h.op.status().policies[0]?.emitDelayMs).toBe(1_000);
    expect(h.op.status().policies[0]?.lateAcceptedEvents).toBe(2);
  });

  it("cuts a session at each multiple of the length cap", () => {
    const billing = DEFAULT_POLICIES[2] as PolicyConfig;
    const h = harness([billing], { gap: "10s", maxLength: "1m" });
    for (let ts = 40_000; ts <= 80_000; ts += 5_000) h.event(ev(ts, ts, "/r"));
    h.finish();
    expect(h.panes.map(brief)).toEqual([
      ["final", `billing|session:api/u|10000|${T0 + 40_000}`, 4, 0, 40_000, 65_000, 15_000, "/r", "/r"],
      ["final", `billing|session:api/u|10000|${T0 + 60_000}`, 5, 0, 60_000, 90_000, 20_000, "/r", "/r"],
    ]);
  });

  it("keeps users apart, skips events without a user, and escapes ids", () => {
    const h = harness([DEFAULT_POLICIES[2] as PolicyConfig], { gap: "10s" });
    h.event(ev(0, 0, "/a", 200, "a|b"));
    h.event(ev(1_000, 1_000, "/a", 200, "a/b"));
    h.event(ev(2_000, 2_000, "/a", 200, ""));
    h.finish();
    expect(h.panes.map((p) => [p.id, p.key])).toEqual([
      [`billing|session:api/a%7Cb|10000|${T0}`, { service: "api", user: "a|b" }],
      [`billing|session:api/a%2Fb|10000|${T0 + 1_000}`, { service: "api", user: "a/b" }],
    ]);
    expect(h.op.status().anonymousEvents).toBe(1);
  });

  it("forgets every session and key once the watermarks pass them (no finish needed)", () => {
    const h = harness(
      DEFAULT_POLICIES.map((p) => ({ ...p })),
      { gap: "30s" },
    );
    const events = simulate({ seed: 3, events: 2_000, services: 3, users: 40, startMs: T0 });
    for (const e of events) h.op.event(0, e, { pane: (p) => h.panes.push(p), late: (r) => h.late.push(r) });
    const mid = h.op.status();
    expect(mid.openSessions).toBeGreaterThan(0);
    expect(mid.merges).toBeGreaterThan(0);
    const last = (events[events.length - 1] as TelemetryEvent).ingest_ts - T0;
    h.beat(last + 10 * 60_000);
    const end = h.op.status();
    expect([end.openSessions, end.stateKeys, end.openWindows]).toEqual([0, 0, 0]);
    // Every billing session got exactly one final pane, and every final was emitted by a timer.
    const finals = h.panes.filter((p) => p.policy === "billing");
    expect(finals.every((p) => p.kind === "final")).toBe(true);
    expect(new Set(finals.map((p) => p.id)).size).toBe(finals.length);
    h.finish();
    expect(h.panes.filter((p) => p.policy === "billing").length).toBe(finals.length);
  });

  it("measures bias against the hidden reference: a dropped error session shows as a shortfall", () => {
    const fast: PolicyConfig = {
      name: "fast",
      label: "fast",
      watermark: { kind: "arrival-lag", lagMs: 1_000 },
      graceMs: 0,
      earlyEveryMs: null,
      lateEveryMs: null,
      mode: "accumulating",
    };
    const op = createSessionOperator(
      { ...config([fast]), referenceHorizonMs: 30_000 },
      { gap: "10s", metricsWindow: "1m" },
    );
    const panes: Pane[] = [];
    const late: LateRecord[] = [];
    const out = { pane: (p: Pane) => panes.push(p), late: (r: LateRecord) => late.push(r) };
    op.event(0, ev(0, 0, "/a", 200, "u"), out);
    op.event(0, ev(5_000, 20_000, "/a", 500, "v"), out); // fast: end 15 s <= W 19 s: dropped; the reference keeps it
    expect(late.length).toBe(1);
    op.heartbeat(0, T0 + 90_000, out); // W_ref = 60 s: window [0, 60 s) compared; fast has 1 of 2 sessions, 0 of 1 errors
    expect(op.status().policies[0]?.bias).toEqual({
      countPct: 50,
      errorRatePp: -50,
      p99Pct: null,
      usersPct: null,
      windows: 1,
      spread: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null },
      stage: "final",
      scope: "policy",
      provisional: false,
    });
    expect(op.status().referenceSessions).toBe(0);
    op.event(0, ev(100_000, 100_000, "/a", 200, "u"), out);
    op.heartbeat(0, T0 + 120_000, out);
    expect(panes.map((p) => [p.value.count, p.bias.windows, p.bias.countPct])).toEqual([
      [1, 0, null],
      [1, 1, 50],
    ]);
  });

  it("caps services: past serviceCap a service's users share the keys of service (other), counted", () => {
    const op = createSessionOperator(
      { ...config([DEFAULT_POLICIES[2] as PolicyConfig]), serviceCap: 1 },
      { gap: "10s" },
    );
    const panes: Pane[] = [];
    const out = { pane: (p: Pane) => panes.push(p), late: () => undefined };
    const at = (service: string, ts: number, user: string): TelemetryEvent => ({
      ...ev(ts, ts, "/r", 200, user),
      service,
    });
    op.event(0, at("api", 0, "u"), out);
    op.event(0, at("web", 1_000, "u"), out);
    op.event(0, at("db", 2_000, "u"), out); // web and db fold: one (other) session of user u
    op.event(0, at("db", 3_000, "v"), out);
    op.finish(out);
    expect(panes.map((p) => [p.key.service, p.key.user, p.value.count])).toEqual([
      ["api", "u", 1],
      ["(other)", "u", 2],
      ["(other)", "v", 1],
    ]);
    expect(op.status().overflow).toEqual({ services: 3, routes: 0 });
  });

  it("rejects bad session settings naming the field", () => {
    const cfg = config([retracting]);
    const err = (s: unknown): string => {
      try {
        createSessionOperator(cfg, s);
      } catch (e) {
        return e instanceof ConfigError ? `${e.code} ${e.message}` : String(e);
      }
      return "no error";
    };
    expect(err({ gap: "soon" })).toMatch(/^TM_CONFIG_INVALID sessions\.gap: /);
    expect(err({ gap: 0 })).toMatch(/^TM_CONFIG_INVALID sessions\.gap: must be/);
    expect(err({ gap: "5h" })).toMatch(/^TM_CONFIG_INVALID sessions\.maxLength: must be at least the gap/);
    expect(err([])).toMatch(/^TM_CONFIG_INVALID sessions: expected an object/);
    expect(err({ gapMs: 5_000, maxLength: "1h", metricsWindow: "30s" })).toBe("no error");
  });
});
