/**
 * Exactly-once effect with idleness on (docs/semantics.md, "Watermarks"; docs/decisions/0010): a
 * recording in which one partition's only service goes silent for 25 s of log time — its requests
 * of that time are held back and arrive when it heals — is run by a real engine with a bounded
 * (event-time) policy and a 2 s idle timeout, once cleanly and once killed with SIGKILL at seeded
 * log times before the end of the input (harness/kill-plan.ts; the input fed step by step and held
 * at each kill, harness/stepped-backfill.ts). Idleness is judged in log time, so the killed run replays the very same decisions: after
 * dedupe on (id, seq) its pane stream equals the clean run's byte for byte (pipelineLagMs aside).
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { DEFAULT_POLICIES } from "@tidemark/engine/core";
import { partitionOf, type Pane, type TelemetryEvent } from "@tidemark/engine/protocol";
import { killPoints, killSeed, logKillPlan } from "../harness/kill-plan.js";
import { SteppedBackfill } from "../harness/stepped-backfill.js";
import type { CliProcess } from "../harness/processes.js";
import {
  dedupePanes,
  makeRecording,
  normalized,
  readStream,
  runBackfill,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";
import { Fleet, newestCheckpointLog } from "./fleet.js";
import { PaneTap } from "./pane-tap.js";

/** Eight services, one per partition of 8: a silent service is a silent partition. */
const SERVICES = oneServicePerPartition(8);
const SILENT = SERVICES[3] as string;
const START = 1_700_000_000_000;
const SILENCE_FROM = START + 20_000;
const HEAL_AT = START + 45_000;
const IDLE = ["--idle-timeout", "2s"];
const FAST_CHECKPOINTS = ["--checkpoint-every", "1s", "--checkpoint-min-wall", "50ms", "--status-every", "100ms"];
const CONFIG = {
  policies: [
    ...DEFAULT_POLICIES,
    {
      name: "bounded",
      label: "bounded: 3 s + 5 s",
      watermark: { kind: "bounded", lag: "3s" },
      grace: "5s",
      earlyEvery: "1s",
      lateEvery: "1s",
      mode: "retracting",
    },
  ],
};

describe("engine crash and replay with idleness on", () => {
  let dir: string;
  let file: string;
  let config: string;
  let events: TelemetryEvent[];
  const fleet = new Fleet();

  beforeAll(() => {
    dir = tempDir("engine-crash-idle");
    events = silenceAndHeal(makeRecording({ events: 3000, seed: 13, startMs: START, services: SERVICES }));
    file = writeRecording(dir, events);
    config = join(dir, "tidemark.config.json");
    writeFileSync(config, JSON.stringify(CONFIG));
  });
  afterAll(() => fleet.close());

  const natsServer = () => fleet.natsServer();

  const engine = (url: string, data: string, extra: string[] = []) =>
    fleet.engine(url, data, ["--config", config, ...IDLE, ...extra]);

  async function finish(nc: NatsConnection, p: CliProcess, endTs: number): Promise<Map<string, Pane>> {
    await waitForStatus(nc, (s) => s.logTime !== null && s.logTime >= endTs, 60_000, `log time ${endTs}`);
    await stopGracefully(p);
    return dedupePanes(await readStream(nc, "TM_PANES"));
  }

  /** The clean run: a fixture every case awaits (started by the first that needs it). */
  let cleanRun: Promise<{ panes: Map<string, Pane>; nc: NatsConnection; endOfRecordingTs: number }> | undefined;
  const cleanOnce = () =>
    (cleanRun ??= (async () => {
      const { nats, nc } = await natsServer();
      const p = engine(nats.url, join(dir, "clean"));
      await p.ready;
      const summary = await runBackfill(nats.url, file, ["--config", config]);
      expect(summary.events).toBe(events.length);
      const endOfRecordingTs = summary.endOfRecordingTs;
      return { panes: await finish(nc, p, endOfRecordingTs), nc, endOfRecordingTs };
    })());

  it("a clean run judges the silent partition idle: the bounded policy fires through the silence, the backlog is late or dropped", async () => {
    const { panes: clean, nc } = await cleanOnce();
    const bounded = [...clean.values()].filter((x) => x.policy === "bounded" && x.key.route === undefined);
    // Windows that end inside the silence got their on-time pane before the heal: only possible with
    // the silent partition out of the event-time minimum (its last event is from before the silence).
    const firedInSilence = bounded.filter(
      (x) => x.kind === "on-time" && x.window.end > SILENCE_FROM + 5_000 && x.emittedAt < HEAL_AT,
    );
    expect(firedInSilence.length).toBeGreaterThan(0);
    // The healed backlog came behind the watermark: accepted late or dropped, and counted.
    const late = (await readStream(nc, "TM_LATE")).map(
      (b) => JSON.parse(b) as { policy: string; event: TelemetryEvent },
    );
    const backlogDrops = late.filter((r) => r.policy === "bounded" && r.event.service === SILENT);
    const backlogLate = bounded.filter((x) => x.key.service === SILENT && x.kind === "late");
    expect(backlogDrops.length + backlogLate.length).toBeGreaterThan(0);
  });

  it("SIGKILL at seeded points changes nothing after dedupe", async () => {
    const clean = (await cleanOnce()).panes;
    const { nats, nc } = await natsServer();
    const tap = new PaneTap(nc);
    const data = join(dir, "crash");
    let p = engine(nats.url, data, FAST_CHECKPOINTS);
    await p.ready;
    // Fed step by step and held at each kill (harness/stepped-backfill.ts), so every kill lands mid-input.
    const feed = new SteppedBackfill(nc, events, { config: CONFIG, runId: "crash-idle" });
    expect(feed.endOfRecordingTs).toBe((await cleanOnce()).endOfRecordingTs);
    const first = (events[0] as TelemetryEvent).ingest_ts;
    const lastIn = (events.at(-1) as TelemetryEvent).ingest_ts;
    const seed = killSeed(13);
    const points = killPoints(seed, 3, first, lastIn);
    logKillPlan("crash-replay-idle", seed, points, first);
    const restored: string[] = [];
    for (let i = 0; i < 3; i++) {
      // Past a checkpoint written by this process (so every restart resumes from one), then the seeded point.
      const cpDir = join(data, "checkpoints", "engine-0-7");
      const atStart = checkpoints(cpDir).at(-1);
      const point = points[i] as number;
      let logTime = -Infinity;
      await feed.feedUntil(
        () => (checkpoints(cpDir).at(-1) ?? atStart) !== atStart && logTime >= point,
        async (t) => {
          const s = await waitForStatus(nc, (x) => (x.logTime ?? 0) >= t, 60_000, `log time +${t - first} ms`);
          logTime = s.logTime as number;
        },
        `kill ${i} (seed ${seed}): a new checkpoint and log time +${point - first} ms`,
        {
          // Past the point, with the next checkpoint due by log time (1 s after the newest's), the
          // log time is held (nudges, harness/stepped-backfill.ts) until its wall-time spacing allows it.
          hold: () =>
            logTime >= point &&
            (checkpoints(cpDir).at(-1) ?? atStart) === atStart &&
            logTime >= newestCheckpointLog(cpDir) + 1_000,
          settle: () => {
            const now = Date.now();
            return waitForStatus(nc, (x) => x.wallTime > now, 10_000, "a status after the nudge");
          },
        },
      );
      const at = `kill ${i} (seed ${seed}) at log time +${logTime - first} ms`;
      expect(logTime, `${at}: before the end of the input`).toBeLessThan(lastIn);
      console.log(`crash-replay-idle: ${at} (input ends at +${lastIn - first} ms; ${feed.nudged} nudges so far)`);
      process.kill(p.child.pid as number, "SIGKILL");
      await p.exited;
      p = engine(nats.url, data, FAST_CHECKPOINTS);
      const ready = await p.ready;
      restored.push(String((ready.engine as { restoredFrom: string | null }).restoredFrom));
    }
    const got = await finish(nc, p, await feed.finish());
    expect(restored.filter((r) => r.endsWith(".tmck"))).toHaveLength(3);
    const missing = [...clean.keys()].filter((k) => !got.has(k));
    const extra = [...got.keys()].filter((k) => !clean.has(k));
    expect({ missing: missing.slice(0, 20), extra: extra.slice(0, 20) }).toEqual({ missing: [], extra: [] });
    const differing = [...clean].filter(([k, x]) => normalized(got.get(k) as Pane) !== normalized(x));
    expect(differing.map(([k]) => k)).toEqual([]);
    // The restarts really replayed: more panes were published than TM_PANES keeps after dedupe.
    await tap.stop(nc);
    expect(tap.panes().length, `seed ${seed}`).toBeGreaterThan(got.size);
  });
});

/** The first service name for each partition of `partitions`, in partition order. */
function oneServicePerPartition(partitions: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.filter(Boolean).length < partitions; i++) out[partitionOf(`svc-${i}`, partitions)] ??= `svc-${i}`;
  return out;
}

/**
 * The silent service's requests that arrived in [SILENCE_FROM, HEAL_AT) are held back: they arrive
 * at the heal, in their order, with their own event times. The recording stays in arrival order.
 */
function silenceAndHeal(events: TelemetryEvent[]): TelemetryEvent[] {
  let k = 0;
  const moved = events.map((e) =>
    e.service === SILENT && e.ingest_ts >= SILENCE_FROM && e.ingest_ts < HEAL_AT
      ? { ...e, ingest_ts: HEAL_AT + k++ }
      : e,
  );
  return moved
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.ingest_ts - b.e.ingest_ts || a.i - b.i)
    .map(({ e }) => e);
}

function checkpoints(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => /^checkpoint-\d+\.tmck$/.test(n))
      .sort();
  } catch {
    return [];
  }
}
