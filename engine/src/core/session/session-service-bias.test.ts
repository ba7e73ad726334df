/** Session bias per service and stage: every expected value below is worked out by hand. */
import { describe, expect, it } from "vitest";
import type { Pane, TelemetryEvent } from "../../protocol.js";
import { defaultCoreConfig } from "../default-config.js";
import type { PolicyConfig } from "../types.js";
import { createSessionOperator } from "./index.js";

const T0 = 14_400_000 * 120;
const S = 1000;

const ev = (service: string, user: string, ts: number, ingest: number, status = 200): TelemetryEvent => ({
  ts: T0 + ts,
  ingest_ts: T0 + ingest,
  service,
  route: "/",
  status,
  latency_ms: 10,
  user,
});

const fast: PolicyConfig = {
  name: "fast",
  label: "fast",
  watermark: { kind: "arrival-lag", lagMs: 1_000 },
  graceMs: 5_000,
  earlyEveryMs: 2_000,
  lateEveryMs: 1_000,
  mode: "accumulating",
};

describe("session bias per service and stage", () => {
  const op = createSessionOperator(
    { ...defaultCoreConfig(), partitions: 1, policies: [fast], referenceHorizonMs: 30_000 },
    { gap: "10s", metricsWindow: "1m" },
  );
  const panes: Pane[] = [];
  const out = { pane: (p: Pane) => panes.push(p), late: () => undefined };
  // y/a: one session [0, 13 s), on time. x/b: [1 s, 11 s) shown on time (log 12 s) without an error,
  // then a late failing event (log 14 s) moves its end to 15 s, past W: a second on-time pane (log
  // 30 s) shows it, but the session counts at on-time once, as first shown; its final has the error. x/c: a failing session [2 s, 12 s) arriving at log 30 s, behind W + grace: dropped by
  // fast, kept by the reference.
  for (const e of [
    ev("y", "a", 0, 0),
    ev("x", "b", 1 * S, 1 * S),
    ev("y", "a", 3 * S, 3 * S),
    ev("x", "b", 5 * S, 14 * S, 500),
    ev("x", "c", 2 * S, 30 * S, 503),
  ])
    op.event(0, e, out);
  op.heartbeat(0, T0 + 95 * S, out); // the reference compares metrics window [0, 60 s) at log 90 s
  const status = op.status();

  it("each service's on-time and final session counts are compared with the reference's on their own", () => {
    const dials = status.policies[0]?.services ?? [];
    const of = (s: string) => dials.find((d) => d.service === s);
    // x: the reference saw 2 sessions end, both failing. Final: 1 session, failing (50 %, 0 pp).
    // On-time: 1 session, not failing (50 %, −100 pp).
    expect(of("x")?.final).toMatchObject({
      countPct: 50,
      errorRatePp: 0,
      windows: 1,
      stage: "final",
      scope: "service",
    });
    expect(of("x")?.onTime).toMatchObject({ countPct: 50, errorRatePp: -100, windows: 1, stage: "on-time" });
    expect(of("y")?.final).toMatchObject({ countPct: 0, errorRatePp: 0, windows: 1 });
    expect(of("y")?.onTime).toMatchObject({ countPct: 0, errorRatePp: 0, windows: 1 });
    // pooled final (the policy's bias, as before): 2 of 3 sessions, 1 of 2 errors.
    expect(status.policies[0]?.bias.countPct).toBeCloseTo(100 / 3, 9);
    expect(status.policies[0]?.bias.errorRatePp).toBeCloseTo(100 * (1 / 2 - 2 / 3), 9);
    expect(status.policies[0]?.stages.map((s) => [s.stage, s.windowMs, s.bias.windows])).toEqual([
      ["on-time", 60_000, 1],
      ["final", 60_000, 1],
    ]);
  });

  it("later session panes carry their own service's bias of their stage; early panes say they are not measured", () => {
    const before = panes.length;
    op.event(0, ev("x", "d", 100 * S, 100 * S), out);
    op.event(0, ev("y", "e", 100 * S, 100 * S), out);
    op.heartbeat(0, T0 + 103 * S, out); // early panes at the 2 s ticks
    op.heartbeat(0, T0 + 112 * S, out); // on-time at W >= 110 s
    const later = panes.slice(before);
    const early = later.filter((p) => p.kind === "early");
    const onTime = later.filter((p) => p.kind === "on-time");
    expect(early.length).toBe(2);
    for (const p of early) expect(p.bias).toMatchObject({ stage: "early", windows: 0, countPct: null });
    expect(onTime.map((p) => [p.key.service, p.bias.stage, p.bias.scope, p.bias.countPct, p.bias.errorRatePp])).toEqual(
      [
        ["x", "on-time", "service", 50, -100],
        ["y", "on-time", "service", 0, 0],
      ],
    );
  });
});
