import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "../protocol.js";
import { capture } from "./__fixtures__/capture.js";
import { createCore } from "./create-core.js";
import { validateCoreConfig } from "./validate-config.js";

const T0 = 1_767_225_600_000;
const config = validateCoreConfig({
  partitions: 2,
  windows: ["10s"],
  policies: [
    { name: "bounded", watermark: { kind: "bounded", lag: "6s" }, grace: "5s", lateEvery: "1s", mode: "accumulating" },
  ],
  referenceHorizon: "1m",
});

function ev(ts: number, ingest: number, service = "a"): TelemetryEvent {
  return { ts, ingest_ts: ingest, service, route: "/r", status: 200, latency_ms: 10, user: "u" };
}

describe("idle partitions and the minimum rule (E7)", () => {
  it("a silent partition holds the watermark; marking it idle lets panes fire; its later events are late or dropped, never lost", () => {
    const core = createCore(config);
    const out = capture();
    for (let i = 0; i < 60; i++) core.event(0, ev(T0 + i * 1000, T0 + i * 1000 + 200), out);
    // Partition 1 never spoke and is not idle: the bounded watermark cannot advance.
    expect(core.status().policies[0]?.watermark).toBeNull();
    expect(core.status().heldBackBy).toBe(1);
    expect(out.panes).toEqual([]);

    core.setIdle(1, true, out);
    const W = core.status().policies[0]?.watermark as number;
    expect(W).toBe(T0 + 59_000 - 6000);
    expect(out.panes.filter((p) => p.kind === "final").length).toBeGreaterThan(0);
    const finalsBefore = out.panes.filter((p) => p.kind === "final" && p.key.route === undefined);
    expect(finalsBefore.every((p) => p.window.end + 5000 <= W)).toBe(true);

    // Partition 1 returns with old events: one inside the grace (late, accepted), one behind it (dropped).
    core.setIdle(1, false, out);
    const lateTs = T0 + 45_000; // window [40s, 50s): end <= W < end + grace
    const lateWindowEnd = Math.floor(lateTs / 10_000) * 10_000 + 10_000;
    expect(lateWindowEnd <= W && lateWindowEnd + 5000 > W).toBe(true);
    const droppedTs = T0 + 5_000; // window [T0, T0+10s) closed long ago
    core.event(1, ev(lateTs, T0 + 60_000, "b"), out);
    core.event(1, ev(droppedTs, T0 + 60_100, "b"), out);
    const status = core.status().policies[0];
    expect(status?.lateAccepted).toBe(1);
    expect(status?.dropped).toBe(1);
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

  it("heartbeats of a quiet partition advance an event-time watermark only through the other partitions", () => {
    const core = createCore(config);
    const out = capture();
    core.heartbeat(1, T0, out);
    for (let i = 0; i < 30; i++) core.event(0, ev(T0 + i * 1000, T0 + i * 1000 + 100), out);
    // Partition 1 spoke (heartbeat) but has no event time: maxTs is -Infinity, so W stays back.
    expect(core.status().policies[0]?.watermark).toBeNull();
    core.event(1, ev(T0 + 29_000, T0 + 29_500, "b"), out);
    expect(core.status().policies[0]?.watermark).toBe(T0 + 23_000);
  });
});
