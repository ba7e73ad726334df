/**
 * Exactly-once effect (docs/operations.md, "Recovery"): the engine as a real child process against
 * a real nats-server. A clean run's final panes equal the recording's truth under each policy; runs
 * killed with SIGKILL at seeded log times before the end of the input (harness/kill-plan.ts; one
 * restart finding a corrupt newest checkpoint), and a run whose nats-server restarts mid-input
 * (the input fed step by step and held at each kill or restart, harness/stepped-backfill.ts) give —
 * after dedupe on (id, seq) — the clean run's pane stream byte for byte (pipelineLagMs, a
 * wall-clock field, aside).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { decodeEventBatch, type Pane } from "@tidemark/engine/protocol";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { decodeCheckpoint, type CheckpointHeader } from "@tidemark/engine/runtime";
import { killPoints, killSeed, logKillPlan } from "../harness/kill-plan.js";
import { SteppedBackfill } from "../harness/stepped-backfill.js";
import type { CliProcess } from "../harness/processes.js";
import {
  dedupePanes,
  lastPanes,
  makeRecording,
  metricValue,
  normalized,
  readStream,
  runBackfill,
  scrape,
  stopGracefully,
  tempDir,
  truthByPane,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";
import { checkpointFiles, Fleet, newestCheckpointLog } from "./fleet.js";
import { PaneTap } from "./pane-tap.js";

const events = makeRecording({ events: 3000, seed: 7 });
const FIRST_IN = (events[0] as (typeof events)[number]).ingest_ts;
const LAST_IN = (events.at(-1) as (typeof events)[number]).ingest_ts;
const FAST_CHECKPOINTS = ["--checkpoint-every", "1s", "--checkpoint-min-wall", "50ms", "--status-every", "100ms"];

describe("engine crash and replay", () => {
  let dir: string;
  let file: string;
  const fleet = new Fleet();

  beforeAll(() => {
    dir = tempDir("engine-crash");
    file = writeRecording(dir, events);
  });
  afterAll(() => fleet.close());

  const natsServer = () => fleet.natsServer();

  const engine = (url: string, data: string, extra: string[] = []) => fleet.engine(url, data, extra);

  async function finish(nc: NatsConnection, p: CliProcess, endTs: number): Promise<Map<string, Pane>> {
    await waitForStatus(nc, (s) => s.logTime !== null && s.logTime >= endTs, 60_000, `log time ${endTs}`);
    await stopGracefully(p);
    return dedupePanes(await readStream(nc, "TM_PANES"));
  }

  /** The clean run: a fixture every case awaits (started by the first that needs it). */
  let cleanRun: Promise<{
    panes: Map<string, Pane>;
    endOfRecordingTs: number;
    runId: string;
    nc: NatsConnection;
    url: string;
  }>;
  const cleanOnce = () =>
    (cleanRun ??= (async () => {
      const { nats, nc } = await natsServer();
      const p = engine(nats.url, join(dir, "clean"));
      await p.ready;
      const summary = await runBackfill(nats.url, file);
      expect(summary.events).toBe(events.length);
      const panes = await finish(nc, p, summary.endOfRecordingTs);
      return { panes, endOfRecordingTs: summary.endOfRecordingTs, runId: summary.runId, nc, url: nats.url };
    })());

  function expectSameStream(clean: Map<string, Pane>, got: Map<string, Pane>): void {
    const missing = [...clean.keys()].filter((k) => !got.has(k));
    const extra = [...got.keys()].filter((k) => !clean.has(k));
    expect({ missing: missing.slice(0, 20), extra: extra.slice(0, 20) }).toEqual({ missing: [], extra: [] });
    expect(got.size).toBe(clean.size);
    const differing = [...clean].filter(
      ([k, p]) => got.get(k) === undefined || normalized(got.get(k) as Pane) !== normalized(p),
    );
    expect(differing.map(([k]) => k)).toEqual([]);
  }

  it("a clean run's final panes equal the recording's truth under every policy and window", async () => {
    const { panes: clean, endOfRecordingTs, nc, url } = await cleanOnce();
    const last = lastPanes(clean.values());
    const cfg = defaultCoreConfig();
    let compared = 0;
    for (const policy of cfg.policies) {
      const lagMs = policy.watermark.kind === "arrival-lag" ? policy.watermark.lagMs : 0;
      for (const w of cfg.windows) {
        const truth = truthByPane(events, { name: policy.name, lagMs, graceMs: policy.graceMs }, w.sizeMs);
        const got = new Map<string, { count: number; errors: number }>();
        for (const [id, pane] of last)
          if (
            id.startsWith(`${policy.name}|`) &&
            pane.key.route === undefined &&
            pane.window.end - pane.window.start === w.sizeMs
          )
            got.set(id, { count: pane.value.count, errors: pane.value.errors });
        expect(got).toEqual(truth);
        compared += truth.size;
      }
    }
    expect(compared).toBeGreaterThan(100);
    // The recording has a late tail: the fast policy loses part of it, billing (grace 90 s) none.
    const kept = (name: string): number => {
      const policy = cfg.policies.find((x) => x.name === name);
      const lagMs = policy?.watermark.kind === "arrival-lag" ? policy.watermark.lagMs : 0;
      const truth = truthByPane(events, { name, lagMs, graceMs: policy?.graceMs ?? 0 }, 10_000);
      return [...truth.values()].reduce((a, t) => a + t.count, 0);
    };
    expect(kept("dashboard")).toBeLessThan(events.length);
    expect(kept("billing")).toBe(events.length);

    // SIGTERM wrote a final checkpoint at the end of the recording: a restart resumes there and
    // has nothing to emit again.
    const stored = (await readStream(nc, "TM_PANES")).length;
    const again = engine(url, join(dir, "clean"));
    const ready = (await again.ready).engine as { restoredFrom: string };
    const header = decodeCheckpoint(readFileSync(ready.restoredFrom), ready.restoredFrom).header;
    expect(header.logTime).toBe(endOfRecordingTs);
    const status = await waitForStatus(nc, () => true, 10_000, "a status of the restarted engine");
    expect(status.eventsTotal).toBe(0);
    await stopGracefully(again);
    expect((await readStream(nc, "TM_PANES")).length).toBe(stored);
  });

  it("SIGKILL at seeded points (and a corrupt newest checkpoint) changes nothing after dedupe", async () => {
    const clean = (await cleanOnce()).panes;
    const { nats, nc } = await natsServer();
    const tap = new PaneTap(nc);
    const data = join(dir, "crash");
    const cpDir = join(data, "checkpoints", "engine-0-7");
    let p = engine(nats.url, data, FAST_CHECKPOINTS);
    await p.ready;
    // Fed step by step and held at each kill (harness/stepped-backfill.ts), so every kill lands mid-input.
    const feed = new SteppedBackfill(nc, events, { runId: "crash-replay" });
    expect(feed.endOfRecordingTs).toBe((await cleanOnce()).endOfRecordingTs);
    const seed = killSeed(7);
    const points = killPoints(seed, 3, FIRST_IN, LAST_IN);
    logKillPlan("crash-replay", seed, points, FIRST_IN);
    const killedAt: number[] = [];
    const restored: Array<string | null> = [];
    let corrupted = "";
    for (let i = 0; i < 3; i++) {
      // Two checkpoints on disk before any kill (files are kept, 3 by default): every restart,
      // the one finding its newest file corrupt included, has one to restore. Then the seeded point.
      const point = points[i] as number;
      let logTime = -Infinity;
      await feed.feedUntil(
        () => checkpointFiles(cpDir).length >= 2 && logTime >= point,
        async (t) => {
          const s = await waitForStatus(nc, (x) => (x.logTime ?? 0) >= t, 60_000, `log time +${t - FIRST_IN} ms`);
          logTime = s.logTime as number;
        },
        `kill ${i} (seed ${seed}): two checkpoints on disk and log time +${point - FIRST_IN} ms`,
        {
          // Past the point, with the next checkpoint due by log time (1 s after the newest's), the
          // log time is held (nudges, harness/stepped-backfill.ts) until its wall-time spacing allows it.
          hold: () =>
            logTime >= point && checkpointFiles(cpDir).length < 2 && logTime >= newestCheckpointLog(cpDir) + 1_000,
          settle: () => {
            const now = Date.now();
            return waitForStatus(nc, (x) => x.wallTime > now, 10_000, "a status after the nudge");
          },
        },
      );
      killedAt.push(logTime);
      const at = `kill ${i} (seed ${seed}) at log time +${logTime - FIRST_IN} ms`;
      expect(logTime, `${at}: before the end of the input`).toBeLessThan(LAST_IN);
      console.log(`crash-replay: ${at} (input ends at +${LAST_IN - FIRST_IN} ms; ${feed.nudged} nudges so far)`);
      process.kill(p.child.pid as number, "SIGKILL");
      await p.exited;
      if (i === 2) corrupted = corruptNewestCheckpoint(cpDir);
      // What the restart must restore: the newest file that verifies, read while no engine runs.
      const files = checkpointFiles(cpDir).filter((f) => f !== corrupted);
      const expected = files[0] as string;
      const header: CheckpointHeader = decodeCheckpoint(readFileSync(expected), expected).header;
      p = engine(nats.url, data, FAST_CHECKPOINTS);
      const ready = await p.ready;
      const from = (ready.engine as { restoredFrom: string | null }).restoredFrom;
      restored.push(from);
      const context = `kill ${i} (seed ${seed}) at log time +${(killedAt[i] as number) - FIRST_IN} ms; restored from ${from}`;
      expect(from, context).toBe(expected);
      expect(header.worker, context).toBe("engine-0-7");
      expect(header.partitions, context).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(
        header.offsets.some((o) => o.lastSeq > 0),
        context,
      ).toBe(true);
      expect(header.logTime, context).not.toBeNull();
    }
    const end = await feed.finish();
    const metrics = await scrape(await p.ready);
    const got = await finish(nc, p, end);
    const context = `seed ${seed}, kills at log time ${killedAt.map((t) => `+${t - FIRST_IN}`).join(", ")} ms; restored from ${restored.join(", ")}`;
    expect(
      restored.filter((r) => r !== null),
      context,
    ).toHaveLength(3);
    expect(restored[2], context).not.toBe(corrupted);
    expect(p.output()).toContain(`skipped corrupt checkpoint ${corrupted}`);
    expect(metricValue(metrics, "tidemark_engine_checkpoints_corrupt_total")).toBe(1);
    expectSameStream(clean, got);
    // The restarts really replayed: more panes were published than TM_PANES keeps after dedupe.
    await tap.stop(nc);
    expect(tap.panes().length, context).toBeGreaterThan(got.size);
  });

  it("a nats-server restart mid-input (and a backfill re-run) changes nothing after dedupe", async () => {
    const { panes: clean, runId } = await cleanOnce();
    const { nats, nc } = await natsServer();
    const p = engine(nats.url, join(dir, "nats-restart"), FAST_CHECKPOINTS);
    await p.ready;
    // A third of the recording fed step by step under the CLI backfill's own message ids
    // (harness/stepped-backfill.ts), the rest held: the restart lands mid-input.
    const feed = new SteppedBackfill(nc, events, { runId });
    await feed.feedUntil(
      async () => (await storedEvents(nc)) >= events.length / 3,
      async () => undefined,
      "a third of the events stored",
    );
    await nats.restart();
    // The re-run publishes the whole recording under the same ids: what the feed stored is
    // deduplicated on its message ids, the rest is new.
    const again = await runBackfill(nats.url, file);
    expect(again.runId).toBe(runId);
    expect(again.duplicates).toBeGreaterThan(0);
    expect(again.duplicates, "the restart came before the end of the input").toBeLessThan(again.messages);
    expectSameStream(clean, await finish(nc, p, again.endOfRecordingTs));
  });
});

/** Events stored in TM_EVENTS so far (heartbeats are empty messages). */
async function storedEvents(nc: NatsConnection): Promise<number> {
  return (await readStream(nc, "TM_EVENTS")).reduce((n, body) => n + decodeEventBatch(body).length, 0);
}

/** Flips one byte in the middle of the newest checkpoint file; returns its path. */
function corruptNewestCheckpoint(dir: string): string {
  const file = checkpointFiles(dir)[0];
  if (!file) throw new Error(`no checkpoint in ${dir}`);
  const bytes = readFileSync(file);
  const at = Math.floor(bytes.length / 2);
  bytes.writeUInt8((bytes[at] ?? 0) ^ 0xff, at);
  writeFileSync(file, bytes);
  return file;
}
