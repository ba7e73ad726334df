import { describe, expect, it } from "vitest";
import { ageBucketOf, type Pane, type TelemetryEvent } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { validateCoreConfig } from "../validate-config.js";

const T = 1_767_225_600_000; // a multiple of 10 s
const S = 1000;

const ev = (service: string, ts: number, ingest: number, status = 200): TelemetryEvent => ({
  ts,
  ingest_ts: ingest,
  service,
  route: "/",
  status,
  latency_ms: 10,
  user: `u-${service}-${ts}`,
});

/**
 * Window 0 = [T, T + 10 s): a and b send 10 on-time events each; a also sends 2 failing events that
 * arrive after the fast policy closed the window (dropped by it, kept by the reference). Windows 1
 * to 4 carry a few on-time events of a, b and, from window 4, a new service c.
 */
function stream(): TelemetryEvent[] {
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < 10; i++) {
    out.push(ev("a", T + i * 900, T + i * 900 + 100));
    out.push(ev("b", T + i * 900 + 50, T + i * 900 + 150));
  }
  out.push(ev("a", T + 9_500, T + 12_000, 503), ev("a", T + 9_600, T + 12_100, 500));
  for (let w = 1; w <= 4; w++)
    for (let i = 0; i < 5; i++) {
      const ts = T + w * 10 * S + i * 1900 + 300;
      out.push(ev("a", ts, ts + 100), ev("b", ts + 10, ts + 110));
      if (w === 4) out.push(ev("c", ts + 20, ts + 120));
    }
  return out.sort((x, y) => x.ingest_ts - y.ingest_ts);
}

const config = validateCoreConfig({
  partitions: 1,
  windows: ["10s"],
  policies: [
    {
      name: "fast",
      watermark: { kind: "arrival-lag", lag: "1s" },
      grace: 0,
      earlyEvery: "2s",
      mode: "accumulating",
    },
  ],
  referenceHorizon: "30s",
});
/** The policy's early cadence: early panes after the window's end are bucketed by it. */
const EARLY_MS = 2_000;

describe("bias per service and stage", () => {
  const events = stream();
  const core = createCore(config);
  const out = capture();
  // status() just before the first input at or past T + 39 s (the reference closes window 0 at T + 40 s).
  let statusBefore: ReturnType<typeof core.status> | undefined;
  for (const e of events) {
    if (e.ingest_ts >= T + 39 * S) statusBefore ??= core.status();
    core.event(0, e, out);
  }
  const services = (p: Pane) => p.key.route === undefined;

  it("each service is measured on its own: the one whose late events failed shows its own shortfall, the other none", () => {
    // Window 0 alone is closed by the reference (at T + 40 s; the last event is at T + 48 s).
    const dials = core.status().policies[0]?.services ?? [];
    const of = (s: string) => dials.find((d) => d.service === s);
    // a: 12 events in the reference, 10 shown, 0 of 2 errors; b: all 10 shown.
    const close = (x: number) => expect.closeTo(x, 9) as number;
    expect(of("a")?.final).toMatchObject({
      windows: 1,
      countPct: close((100 * 2) / 12),
      errorRatePp: close(-200 / 12),
    });
    expect(of("a")?.final).toMatchObject({ stage: "final", scope: "service", provisional: false });
    expect(of("a")?.onTime).toMatchObject({ windows: 1, countPct: close(200 / 12), stage: "on-time" });
    expect(of("b")?.final).toMatchObject({ windows: 1, countPct: 0, errorRatePp: 0 });
    expect(of("c")).toBeUndefined();
    // a's two late events both failed, none of its 10 on-time ones did: flagged; b had nothing late.
    expect(of("a")?.lateness).toMatchObject({ onTimeEvents: 10, onTimeErrors: 0, lateEvents: 2, lateErrors: 2 });
    expect(of("a")?.lateness).toMatchObject({ z: close(Math.sqrt(12)), ratio: null, flagged: true });
    expect(of("b")?.lateness).toMatchObject({ onTimeEvents: 10, lateEvents: 0, z: null, flagged: false });
    // pooled over services (the old measure): 20 of 22 shown, 0 of 2 errors.
    const policy = core.status().policies[0];
    expect(policy?.bias).toMatchObject({ windows: 1, countPct: close(200 / 22), errorRatePp: close(-200 / 22) });
    expect(policy?.bias).toMatchObject({ stage: "final", scope: "policy" });
    const stages = policy?.stages.map((s) => [s.stage, s.age ?? null]);
    expect(stages).toEqual([
      ["early", "0-0.25"],
      ["early", "0.25-0.5"],
      ["early", "0.5-0.75"],
      ["early", "0.75-1"],
      ["early", "1+0"],
      ["on-time", null],
      ["final", null],
    ]);
  });

  it("panes after the first reference close carry their own service's bias of their own stage and age", () => {
    // The reference closes window 0 at the first log time >= T + 40 s, after that time's early tick (timer
    // order: due, then kind): panes emitted at any later log time see it.
    const closedAt = Math.min(...out.panes.map((p) => p.emittedAt).filter((t) => t >= T + 40 * S));
    const later = out.panes.filter((p) => services(p) && p.emittedAt > closedAt);
    expect(later.length).toBeGreaterThan(10);
    // The expected early bias of a bucket: window 0's last early pane of the service there against the reference.
    const refCount = { a: 12, b: 10 } as Record<string, number>;
    const lastEarly = new Map<string, Pane>();
    for (const p of out.panes.filter((q) => services(q) && q.kind === "early" && q.window.start === T))
      lastEarly.set(`${p.key.service}|${ageBucketOf(p.window.start, p.window.end, p.emittedAt, EARLY_MS)}`, p);
    for (const p of later) {
      const service = p.key.service;
      if (service === "c") {
        // no window of its own measured yet: the pooled figure of the same stage
        expect(p.bias.scope).toBe("policy");
        continue;
      }
      if (p.kind === "early") {
        const age = ageBucketOf(p.window.start, p.window.end, p.emittedAt, EARLY_MS);
        expect([p.bias.stage, p.bias.age]).toEqual(["early", age]);
        const shown = lastEarly.get(`${service}|${age}`)?.value.count;
        // Window 0 had no early pane of any service in this bucket (e.g. "1+": its log time jumped past
        // end + lag): nothing measured there.
        if (shown === undefined) {
          expect([p.bias.scope, p.bias.windows]).toEqual(["policy", 0]);
          continue;
        }
        expect([p.bias.scope, p.bias.windows]).toEqual(["service", 1]);
        const want = (100 * ((refCount[service] as number) - (shown as number))) / (refCount[service] as number);
        expect(p.bias.countPct).toBeCloseTo(want, 9);
      } else {
        expect([p.bias.stage, p.bias.scope, p.bias.windows]).toEqual(["on-time", "service", 1]);
      }
    }
    expect(later.some((p) => p.key.service === "c")).toBe(true);
    // Measured panes carry a nowcast from their own bias: the count corrected by its completeness.
    for (const p of later.filter((q) => q.bias.windows > 0)) {
      expect(p.nowcast?.value.count).toBeCloseTo(p.value.count / (1 - (p.bias.countPct as number) / 100), 9);
      expect(p.nowcast?.error.windows).toBe(0); // no window it was published for has closed yet
    }
    for (const p of later.filter((q) => q.bias.windows === 0)) expect(p.nowcast).toBeUndefined();
    expect(later.some((p) => p.kind === "early" && p.key.service === "a" && (p.bias.countPct ?? 0) > 50)).toBe(true);
    expect(later.some((p) => p.kind === "early" && p.bias.windows === 1)).toBe(true);
  });

  it("before the first reference close, panes carry provisional lower bounds (windows compared so far)", () => {
    const closedAt = Math.min(...out.panes.map((p) => p.emittedAt).filter((t) => t >= T + 40 * S));
    const before = out.panes.filter((p) => p.emittedAt < closedAt);
    // Checks run every 10 s of log time (the slice): the first at the first input, the second at
    // the first input at or after T + 10 s, the third at or after T + 20 s, which sees window 0's
    // on-time pane (T + 12 s) against the reference's aggregate with a's late events in it.
    const third = Math.min(...events.map((e) => e.ingest_ts).filter((t) => t >= T + 20 * S));
    for (const p of before) {
      expect(p.bias.stage).toBe(p.kind === "early" ? "early" : "on-time");
      if (p.bias.windows === 0) expect(p.bias.provisional).toBe(false);
      else expect([p.bias.provisional, p.nowcast?.error.windows]).toEqual([true, 0]);
      if (p.emittedAt > third) expect(p.bias.windows).toBeGreaterThan(0);
    }
    const onTime = before.filter((p) => services(p) && p.kind === "on-time" && p.emittedAt > third);
    expect(onTime.length).toBeGreaterThan(0);
    for (const p of onTime) {
      // a: window 0's on-time pane showed 10 of the 12 events the reference holds by then, b all 10.
      const want = p.key.service === "a" ? 200 / 12 : 0;
      expect([p.key.service, p.bias.scope, p.bias.windows]).toEqual([p.key.service, "service", expect.any(Number)]);
      expect(p.bias.countPct).toBeLessThanOrEqual(want + 1e-9);
    }
    expect(onTime.some((p) => p.key.service === "a" && Math.abs((p.bias.countPct ?? 0) - 200 / 12) < 1e-9)).toBe(true);
    // status() says so too, before the close: a provisional pooled final and per-service dials.
    expect(statusBefore?.policies[0]?.bias).toMatchObject({ provisional: true, scope: "policy", stage: "final" });
    expect(statusBefore?.policies[0]?.services.map((d) => [d.service, d.onTime.provisional])).toEqual([
      ["a", true],
      ["b", true],
    ]);
  });
});
