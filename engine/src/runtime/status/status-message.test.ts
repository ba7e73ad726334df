import { describe, expect, it } from "vitest";
import { capture } from "../../core/__fixtures__/capture.js";
import { createCore, defaultCoreConfig, simulate, validateCoreConfig, withSessions } from "../../core/index.js";
import type { CoreStatus, PolicyConfig } from "../../core/types.js";
import type { TelemetryEvent } from "../../protocol.js";
import { buildStatusMessage } from "./status-message.js";

describe("tm.status message", () => {
  it("carries each policy's measured dial: pooled stages per window size and per-service dials", () => {
    const config = validateCoreConfig({ partitions: 1, referenceHorizon: "30s" });
    const core = createCore(config);
    const out = capture();
    for (const e of simulate({ seed: 4, events: 3000, services: 3, spanMs: 120_000, corr: 0.3 })) core.event(0, e, out);
    const status = core.status();
    const msg = buildStatusMessage({
      worker: "engine-0-0",
      wallTime: (status.logTime ?? 0) + 50,
      core: status,
      policies: config.policies,
      partitions: [0],
      laneTimes: [status.logTime],
      waitingFor: null,
      offsets: [],
      lastCheckpointWall: null,
      eventsTotal: status.eventsTotal,
      pipelineLag: { p50: 12, p99: 40 },
    });
    expect(msg.pipelineLag).toEqual({ p50: 12, p99: 40 });
    // The operator's id under its name, and under its first one for older readers (ADR 0045).
    expect([msg.operatorId, msg.worker]).toEqual(["engine-0-0", "engine-0-0"]);
    const dashboard = msg.policies.find((p) => p.name === "dashboard");
    expect(dashboard?.stages).toEqual(status.policies[0]?.stages);
    expect(dashboard?.services).toEqual(status.policies[0]?.services);
    // 10 s and 60 s windows, measured: on-time and final stages, three services per size.
    expect(new Set(dashboard?.stages?.map((s) => s.windowMs))).toEqual(new Set([10_000, 60_000]));
    expect(
      dashboard?.stages?.find((s) => s.windowMs === 10_000 && s.stage === "on-time")?.bias.windows,
    ).toBeGreaterThan(0);
    expect(dashboard?.services?.filter((d) => d.windowMs === 10_000).map((d) => d.service)).toEqual(["a", "b", "c"]);
    // billing is final-only: its on-time dial is its final.
    const billing = msg.policies.find((p) => p.name === "billing");
    for (const d of billing?.services ?? []) expect(d.onTime).toBe(d.final);
    expect(billing?.stages?.map((s) => s.stage)).toEqual(["final", "final"]);
  });

  it("counts session joins as `sessions.joins`, and the same count as `sessions.merges` for older readers", () => {
    const T = 1_767_225_600_000;
    const policy: PolicyConfig = {
      name: "alert",
      label: "alert",
      watermark: { kind: "arrival-lag", lagMs: 1_000 },
      graceMs: 120_000,
      earlyEveryMs: null,
      lateEveryMs: 1_000,
      mode: "retracting",
    };
    const config = {
      ...defaultCoreConfig(),
      partitions: 1,
      windows: [{ kind: "tumbling" as const, sizeMs: 60_000 }],
      policies: [policy],
      referenceHorizonMs: 120_000,
    };
    const core = withSessions({ gap: "10s" }).create(config);
    const out = capture();
    const at = (ts: number, arrival: number): TelemetryEvent => ({
      ts: T + ts,
      ingest_ts: T + arrival,
      service: "shop",
      route: "/",
      status: 200,
      latency_ms: 1,
      user: "ann",
    });
    // Two sessions of ann 15 s apart (gap 10 s), then a late event between them: one join.
    for (const e of [at(1_000, 1_000), at(16_000, 16_000), at(8_500, 62_000)]) core.event(0, e, out);
    core.heartbeat(0, T + 63_500, out);
    const status: CoreStatus = core.status();
    const msg = buildStatusMessage({
      worker: "engine-0-0",
      wallTime: T + 64_000,
      core: status,
      policies: config.policies,
      partitions: [0],
      laneTimes: [status.logTime],
      waitingFor: null,
      offsets: [],
      lastCheckpointWall: null,
      eventsTotal: status.eventsTotal,
      pipelineLag: { p50: null, p99: null },
    });
    expect([msg.sessions?.joins, msg.sessions?.merges]).toEqual([1, 1]);
  });
});
