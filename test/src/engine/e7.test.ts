/**
 * E7 as a test (the experiment itself: e7-experiment.ts, `npm run experiment:e7 -w test`). Idleness
 * is judged in log time (docs/semantics.md, "Watermarks"), so the phases are cut by the log time each
 * status sample carries, not by the wall clock: the assertions hold however loaded the machine is.
 */
import { afterAll, describe, expect, it } from "vitest";
import { startTestNats, type TestNats } from "../index.js";
import { metricValue } from "./engine-fixtures.js";
import { E7_SILENT, runE7, timeline, type E7Result, type E7Sample } from "./e7-experiment.js";

const SILENCE_AT = 3_000;
const HEAL_AT = 8_000;
const IDLE_MS = 2_000;
/** A record's idle clock starts at its merged log time, which may pass its ingest_ts by a few ms. */
const KEY_SLACK_MS = 250;

/**
 * Samples taken while the pipeline flows: the sample's log time first seen under 1.5 s of wall time
 * before it. When nothing moves for HOLD_MS (2 s, stall-watch.ts) — a loaded machine starving the
 * feeder — the status rightly names the partition the merge waits for instead of the core's.
 */
function flowing(samples: E7Sample[]): E7Sample[] {
  const firstSeen = new Map<number | null, number>();
  for (const s of [...samples].sort((a, b) => a.t - b.t)) if (!firstSeen.has(s.logTime)) firstSeen.set(s.logTime, s.t);
  return samples.filter((s) => s.t - (firstSeen.get(s.logTime) ?? s.t) < 1500);
}

/** Samples whose log time is in [from, to). */
function byLogTime(r: E7Result, from: number, to: number): E7Sample[] {
  return r.samples.filter((s) => s.logTime !== null && s.logTime >= from && s.logTime < to);
}

describe("E7: a silent partition", () => {
  const servers: TestNats[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  async function run(idleTimeout: string): Promise<E7Result> {
    const nats = await startTestNats();
    servers.push(nats);
    const r = await runE7({ natsUrl: nats.url, idleTimeout, silenceAt: SILENCE_AT, healAt: HEAL_AT });
    expect(r.samples.length).toBeGreaterThan(20);
    expect(r.heldBack).toBeGreaterThan(0);
    expect(Number.isFinite(r.silentSinceTs) && Number.isFinite(r.healTs)).toBe(true);
    return r;
  }

  it("without idleness: the watermark stalls, no on-time pane fires, status names the partition; nothing is lost", async () => {
    const r = await run("1h");
    const ctx = timeline(r.samples).join("\n");
    const silent = byLogTime(r, r.silentSinceTs + 1000, r.healTs);
    expect(silent.length, ctx).toBeGreaterThan(5);
    expect(new Set(silent.map((s) => s.watermark)).size, ctx).toBe(1);
    expect(new Set(silent.map((s) => s.onTimePanes)).size, ctx).toBe(1);
    expect(flowing(silent).length, ctx).toBeGreaterThan(3);
    expect(
      flowing(silent).filter((s) => s.heldBackBy !== E7_SILENT || s.idle[E7_SILENT]),
      ctx,
    ).toEqual([]);
    // After the heal the pipeline catches up exactly: the backlog was waited for.
    const after = byLogTime(r, r.healTs + 1000, r.endTs);
    expect(after.length, ctx).toBeGreaterThan(0);
    expect(after.at(-1)?.onTimePanes ?? 0, ctx).toBeGreaterThan(silent[0]?.onTimePanes ?? 0);
    expect([r.countedFast, r.droppedFast, r.lateRecordsFast], ctx).toEqual([r.sent, 0, 0]);
    expect(metricValue(r.metricsBeforeHeal, "tidemark_engine_partition_idle", { partition: String(E7_SILENT) })).toBe(
      0,
    );
    expect(metricValue(r.metricsAtEnd, "tidemark_engine_dropped_window_events_total", { policy: "fast" })).toBe(0);
  });

  it("with idleness: the watermark moves on after the timeout of log time; the healed backlog is late or dropped and counted", async () => {
    const r = await run(`${IDLE_MS / 1000}s`);
    const ctx = timeline(r.samples).join("\n");
    // Before the timeout the silent partition pins W; from the timeout on (log time) it is idle.
    const stalled = byLogTime(r, r.silentSinceTs + 500, r.silentSinceTs + IDLE_MS);
    expect(stalled.length, ctx).toBeGreaterThan(0);
    expect(flowing(stalled).length, ctx).toBeGreaterThan(0);
    expect(
      flowing(stalled).filter((s) => s.heldBackBy !== E7_SILENT || s.idle[E7_SILENT]),
      ctx,
    ).toEqual([]);
    const idle = byLogTime(r, r.silentSinceTs + IDLE_MS + KEY_SLACK_MS, r.healTs);
    expect(idle.length, ctx).toBeGreaterThan(3);
    expect(
      idle.filter((s) => !s.idle[E7_SILENT] || s.heldBackBy === E7_SILENT),
      ctx,
    ).toEqual([]);
    // Moved on: every idle sample past where the silent partition pinned it, the last by more than a
    // second (compared with the pinned value, not within the idle phase: a loaded machine samples
    // that phase sparsely).
    const last = idle.at(-1) as E7Sample;
    const pinned = stalled.at(-1)?.watermark ?? Infinity;
    expect(
      idle.filter((s) => (s.watermark ?? -Infinity) <= pinned),
      ctx,
    ).toEqual([]);
    expect(last.watermark ?? -Infinity, ctx).toBeGreaterThan(pinned + 1000);
    expect(last.onTimePanes, ctx).toBeGreaterThan(stalled.at(-1)?.onTimePanes ?? Infinity);
    // The partition rejoins with its backlog, whose events are behind the watermark.
    const rejoined = byLogTime(r, r.healTs + 700, r.endTs);
    expect(rejoined.length, ctx).toBeGreaterThan(0);
    expect(
      rejoined.filter((s) => s.idle[E7_SILENT]),
      ctx,
    ).toEqual([]);
    expect(r.droppedFast, ctx).toBeGreaterThan(0);
    expect(r.droppedFast, ctx).toBeLessThanOrEqual(r.heldBack);
    expect(r.samples.at(-1)?.lateAcceptedSlow ?? 0, ctx).toBeGreaterThan(0);
    // Never silently lost: every event is in a pane or counted as dropped and on TM_LATE.
    expect(r.lateRecordsFast).toBe(r.droppedFast);
    expect(r.lateRecordsSlow).toBe(r.droppedSlow);
    expect(r.countedFast + r.droppedFast, ctx).toBe(r.sent);
    expect(r.countedSlow + r.droppedSlow, ctx).toBe(r.sent);
    // … and in the metrics.
    expect(metricValue(r.metricsBeforeHeal, "tidemark_engine_partition_idle", { partition: String(E7_SILENT) })).toBe(
      1,
    );
    expect(metricValue(r.metricsAfterHeal, "tidemark_engine_partition_idle", { partition: String(E7_SILENT) })).toBe(0);
    expect(metricValue(r.metricsAtEnd, "tidemark_engine_dropped_window_events_total", { policy: "fast" })).toBe(
      r.droppedFast,
    );
    expect(metricValue(r.metricsAfterHeal, "tidemark_engine_events_total")).toBe(r.sent);
  });
});
