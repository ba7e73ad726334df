import { describe, expect, it } from "vitest";
import { defaultCoreConfig } from "../../core/default-config.js";
import { decodeEventBatch, partitionOf, type TelemetryEvent } from "../../protocol.js";
import { BackfillPlan, type BackfillMessage } from "./backfill-plan.js";
import { parseRecordingLine } from "./recording-line.js";

function recording(n: number): TelemetryEvent[] {
  const services = ["api", "web", "auth", "billing", "search"];
  return Array.from({ length: n }, (_, i) => ({
    ts: 1_000_000 + i * 37 - (i % 7) * 900,
    ingest_ts: 1_000_000 + i * 37,
    service: services[i % services.length] as string,
    route: `/r${i % 3}`,
    status: i % 11 === 0 ? 503 : 200,
    latency_ms: 5 + (i % 50),
    user: `u${i % 13}`,
  }));
}

function run(events: TelemetryEvent[], partitions: number): BackfillMessage[] {
  const plan = new BackfillPlan({ partitions, runId: "x", batchSize: 20 });
  const out = events.flatMap((e) => plan.push(e));
  return [...out, ...plan.end(defaultCoreConfig())];
}

describe("BackfillPlan", () => {
  it("puts every event exactly once on its service's partition, in recording order per partition", () => {
    const events = recording(1000);
    const msgs = run(events, 4);
    for (let p = 0; p < 4; p++) {
      const got = msgs
        .filter((m) => m.partition === p && m.heartbeatTs === undefined)
        .flatMap((m) => decodeEventBatch(m.body));
      expect(got).toEqual(events.filter((e) => partitionOf(e.service, 4) === p));
    }
    expect(msgs.every((m) => m.events <= 20)).toBe(true);
  });

  it("heartbeats every partition each second of ingest time, never ahead of a later event", () => {
    const events = recording(1000);
    const msgs = run(events, 4);
    const lastByPartition = new Map<number, number>();
    for (const m of msgs) {
      const times = m.heartbeatTs === undefined ? decodeEventBatch(m.body).map((e) => e.ingest_ts) : [m.heartbeatTs];
      for (const t of times) {
        expect(t).toBeGreaterThanOrEqual(lastByPartition.get(m.partition) ?? -Infinity);
        lastByPartition.set(m.partition, t);
      }
    }
    const span = (events.at(-1)?.ingest_ts ?? 0) - (events[0]?.ingest_ts ?? 0);
    const beats = msgs.filter((m) => m.heartbeatTs !== undefined && m.partition === 2).length;
    // One per crossed second boundary, plus the end-of-recording one.
    expect(beats).toBeGreaterThanOrEqual(Math.floor(span / 1000));
    expect(beats).toBeLessThanOrEqual(Math.ceil(span / 1000) + 2);
  });

  it("ends with a heartbeat on every partition past every window's reference horizon, and ids are deterministic", () => {
    const events = recording(300);
    const msgs = run(events, 3);
    const cfg = defaultCoreConfig();
    const tail = msgs.slice(-3);
    const maxTs = Math.max(...events.map((e) => e.ts));
    for (const m of tail) expect(m.heartbeatTs).toBeGreaterThanOrEqual(maxTs + 60_000 + cfg.referenceHorizonMs);
    expect(tail.map((m) => m.partition)).toEqual([0, 1, 2]);
    expect(run(events, 3).map((m) => m.msgId)).toEqual(msgs.map((m) => m.msgId));
    expect(new Set(msgs.map((m) => m.msgId)).size).toBe(msgs.length);
  });

  it("rejects a bad recording line naming the field", () => {
    expect(() => parseRecordingLine('{"ts":1,"ingest_ts":"x"}', "rec.ndjson:3")).toThrow(
      /rec.ndjson:3 field "ingest_ts" must be a number/,
    );
    expect(() => parseRecordingLine("{oops", "rec.ndjson:4")).toThrow(/TM_|not JSON/);
  });
});
