/**
 * Idleness in log time and the minimum rule (docs/semantics.md, "Watermarks";
 * docs/decisions/0010-core-state-and-idleness.md): a partition whose last record is idleTimeout of
 * log time old leaves the event-time minimum, and rejoins with its next record.
 */
import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { validateCoreConfig } from "../validate-config.js";

const T0 = 1_767_225_600_000;
const config = validateCoreConfig({
  partitions: 2,
  windows: ["10s"],
  policies: [
    { name: "bounded", watermark: { kind: "bounded", lag: "6s" }, grace: "5s", lateEvery: "1s", mode: "accumulating" },
  ],
  referenceHorizon: "1m",
  idleTimeout: "10s",
});

function ev(ts: number, ingest: number, service = "a"): TelemetryEvent {
  return { ts, ingest_ts: ingest, service, route: "/r", status: 200, latency_ms: 10, user: "u" };
}

describe("idle partitions in log time and the minimum rule (E7)", () => {
  it("a silent partition holds W until idleTimeout of log time passes; then panes fire; its later events are late or dropped, never lost", () => {
    const core = createCore(config);
    const out = capture();
    // The first input is at T0 + 200: partition 1, which never spoke, counts its silence from there.
    for (let i = 0; i < 10; i++) core.event(0, ev(T0 + i * 1000, T0 + i * 1000 + 200), out);
    expect(core.status().policies[0]?.watermark).toBeNull();
    expect(core.status().partitions.map((p) => p.idle)).toEqual([false, false]);
    expect(core.status().heldBackBy).toBe(1);
    expect(out.panes).toEqual([]);

    core.event(0, ev(T0 + 10_000, T0 + 10_200), out); // 10 s of log time since the first input: 1 is idle
    expect(core.status().partitions.map((p) => p.idle)).toEqual([false, true]);
    expect(core.status().heldBackBy).toBe(0);
    expect(core.status().policies[0]?.watermark).toBe(T0 + 10_000 - 6000);
    for (let i = 11; i < 60; i++) core.event(0, ev(T0 + i * 1000, T0 + i * 1000 + 200), out);
    const W = core.status().policies[0]?.watermark as number;
    expect(W).toBe(T0 + 59_000 - 6000);
    const finalsBefore = out.panes.filter((p) => p.kind === "final" && p.key.route === undefined);
    expect(finalsBefore.map((p) => p.window.start - T0)).toEqual([0, 10_000, 20_000, 30_000]);

    // Partition 1 returns with old events: one inside the grace (late, accepted), one behind it (dropped).
    const lateTs = T0 + 45_000; // window [40 s, 50 s): end <= W < end + grace
    const lateWindowEnd = T0 + 50_000;
    expect(lateWindowEnd <= W && lateWindowEnd + 5000 > W).toBe(true);
    const droppedTs = T0 + 5_000; // window [0, 10 s) closed long ago
    core.event(1, ev(lateTs, T0 + 60_000, "b"), out);
    expect(core.status().partitions.map((p) => p.idle)).toEqual([false, false]);
    core.event(1, ev(droppedTs, T0 + 60_100, "b"), out);
    // Back in the minimum, its old event time does not pull W back.
    expect(core.status().policies[0]?.watermark).toBe(W);
    const status = core.status().policies[0];
    expect(status).toMatchObject({ lateAcceptedEvents: 1, droppedEvents: 1, droppedWindowEvents: 1 });
    expect(out.dropped.map((l) => [l.event.ts, l.policy, l.reason])).toEqual([
      [droppedTs, "bounded", "behind-watermark"],
    ]);

    core.finish(out);
    // Every event is either in a final pane (service level) or in the late side output.
    const finals = out.panes.filter((p) => p.kind === "final" && p.key.route === undefined);
    const counted = finals.reduce((s, p) => s + p.value.count, 0) + out.dropped.length;
    expect(counted).toBe(62);
    const b = finals.find((p) => p.key.service === "b");
    expect(b?.window.end).toBe(lateWindowEnd);
    expect(b?.lateAccepted).toBe(1);
  });

  it("heartbeats advance log time but do not keep a partition active: a heartbeat-only partition goes idle", () => {
    const core = createCore(config);
    const out = capture();
    core.heartbeat(1, T0, out);
    for (let i = 0; i < 10; i++) core.event(0, ev(T0 + i * 1000, T0 + i * 1000 + 100), out);
    core.heartbeat(1, T0 + 9_500, out);
    // Partition 1 spoke (heartbeats) but has no event time: it holds W back for now.
    expect(core.status().policies[0]?.watermark).toBeNull();
    expect(core.status().partitions[1]).toEqual({ partition: 1, logTime: T0 + 9_500, idle: false });
    core.heartbeat(1, T0 + 10_000, out); // no record on 1 for 10 s of log time: idle, W moves
    expect(core.status().partitions[1]?.idle).toBe(true);
    expect(core.status().policies[0]?.watermark).toBe(T0 + 9_000 - 6000);
    for (let i = 10; i < 30; i++) core.event(0, ev(T0 + i * 1000, T0 + i * 1000 + 100), out);
    core.event(1, ev(T0 + 29_000, T0 + 29_500, "b"), out);
    expect(core.status().partitions[1]?.idle).toBe(false);
    expect(core.status().policies[0]?.watermark).toBe(T0 + 23_000);
  });

  it("a bounded policy over 8 partitions, 2 services and 6 heartbeat-only partitions fires every window ending lag before the largest event time", () => {
    const cfg = validateCoreConfig({
      partitions: 8,
      windows: ["10s"],
      policies: [{ name: "bounded", watermark: { kind: "bounded", lag: "2s" }, mode: "accumulating" }],
      referenceHorizon: "1m",
    });
    const core = createCore(cfg);
    const out = capture();
    // Every partition heartbeats each second (as ingest does); services a and b live on partitions 0 and 1.
    for (let t = 0; t <= 60_000; t += 100) {
      if (t % 1000 === 0) for (let p = 0; p < 8; p++) core.heartbeat(p, T0 + t, out);
      core.event(0, ev(T0 + t, T0 + t + 50, "a"), out);
      core.event(1, ev(T0 + t, T0 + t + 50, "b"), out);
    }
    const largest = T0 + 60_000;
    expect(core.status().policies[0]?.watermark).toBe(largest - 2000);
    expect(core.status().partitions.map((p) => p.idle)).toEqual([false, false, true, true, true, true, true, true]);
    const fired = out.panes.filter((p) => p.kind === "on-time" && p.key.route === undefined);
    const expected = [0, 10_000, 20_000, 30_000, 40_000].flatMap((s) => [`a|${T0 + s}`, `b|${T0 + s}`]);
    expect(fired.map((p) => `${p.key.service}|${p.window.start}`).sort()).toEqual(expected.sort());
    expect(fired.every((p) => p.value.count === 100)).toBe(true);
    expect(core.status().policies[0]?.droppedEvents).toBe(0);
  });

  it("a service that goes quiet pins W only until idleTimeout of log time; its return is late or dropped and counted", () => {
    const cfg = validateCoreConfig({
      partitions: 2,
      windows: ["10s"],
      policies: [{ name: "bounded", watermark: { kind: "bounded", lag: "2s" }, grace: "10s", mode: "accumulating" }],
      referenceHorizon: "1m",
      idleTimeout: "5s",
    });
    const core = createCore(cfg);
    const out = capture();
    const W = (): number | null | undefined => core.status().policies[0]?.watermark;
    for (let t = 0; t <= 20_000; t += 500) {
      core.event(0, ev(T0 + t, T0 + t + 100, "a"), out);
      core.event(1, ev(T0 + t, T0 + t + 100, "b"), out);
    }
    // b goes quiet (heartbeats only); a goes on. Until 5 s of log time after b's last record, b pins W.
    for (let t = 20_500; t <= 24_500; t += 500) {
      core.event(0, ev(T0 + t, T0 + t + 100, "a"), out);
      core.heartbeat(1, T0 + t + 100, out);
    }
    expect(W()).toBe(T0 + 20_000 - 2000);
    expect(core.status().partitions[1]?.idle).toBe(false);
    core.heartbeat(1, T0 + 25_100, out); // 5 s of log time since b's last record (at 20.1 s): idle
    expect(core.status().partitions[1]?.idle).toBe(true);
    expect(W()).toBe(T0 + 24_500 - 2000);
    for (let t = 25_000; t <= 40_000; t += 500) core.event(0, ev(T0 + t, T0 + t + 100, "a"), out);
    expect(W()).toBe(T0 + 38_000);
    const aFinals = out.panes.filter((p) => p.kind === "final" && p.key.service === "a" && p.key.route === undefined);
    expect(aFinals.map((p) => p.window.start - T0)).toEqual([0, 10_000]);
    // b returns with a record of window [20 s, 30 s) (late, within grace) and one of [10 s, 20 s) (closed: dropped).
    core.event(1, ev(T0 + 25_000, T0 + 40_200, "b"), out);
    core.event(1, ev(T0 + 15_000, T0 + 40_300, "b"), out);
    expect(W()).toBe(T0 + 38_000);
    expect(core.status().policies[0]).toMatchObject({ lateAcceptedEvents: 1, droppedEvents: 1 });
    core.finish(out);
    const finals = out.panes.filter((p) => p.kind === "final" && p.key.route === undefined);
    expect(finals.reduce((s, p) => s + p.value.count, 0) + out.dropped.length).toBe(2 * 41 + 40 + 2);
  });
});
