/**
 * The two-stage dataflow end to end (docs/decisions/0029-two-stage-dataflow.md; docs/operations.md,
 * "Merge stage"): engine workers publish partials to TM_PARTIALS, `tidemark merge` publishes the
 * all-services (`*`) panes to TM_PANES. Against a real nats-server, with a backfilled recording:
 * the `*` panes do not depend on how partitions are split over workers (byte for byte after
 * dedupe), nor on SIGKILLs of either stage at seeded points (the input fed step by step and held at
 * each kill: harness/stepped-backfill.ts); their counts are the recording's, their
 * users and p99 within the sketches' documented error of the exact values
 * (docs/decisions/0003-own-sketches.md), where summing the services' users over-counts.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { ALL_SERVICES, PARTIAL_TICK_MS, type Pane } from "@tidemark/engine/protocol";
import { killPoints, killSeed, logKillPlan } from "../harness/kill-plan.js";
import { SteppedBackfill } from "../harness/stepped-backfill.js";
import {
  lastPanes,
  makeRecording,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { checkpointFiles } from "../engine/fleet.js";
import { PaneTap } from "../engine/pane-tap.js";
import {
  allPanes,
  endStack,
  exactQuantile,
  MERGE_ID,
  starPanes,
  startMerge,
  startStack,
  starTruth,
  waitForMergeEnd,
  type Stack,
} from "./merge-fixtures.js";

interface CleanRun {
  star: Map<string, string>;
  panes: Pane[];
  endOfRecordingTs: number;
}

const SPLIT_ONE = [[]];
const SPLIT_TWO = [
  ["--partitions", "0-3"],
  ["--partitions", "4-7"],
];
/**
 * Long enough that no worker is ever left out as idle here: the panes must not depend on wall time.
 * A checkpoint whose alignment waits on a killed worker's barrier is given up after 5 s (60 s by
 * default, during which the merge holds the other worker's partials).
 */
const MERGE_FLAGS = [
  "--checkpoint-timeout",
  "5s",
  "--idle-timeout",
  "120s",
  "--checkpoint-every",
  "2s",
  "--checkpoint-min-wall",
  "100ms",
  "--status-every",
  "100ms",
];
const WORKER_FLAGS = ["--checkpoint-every", "2s", "--checkpoint-min-wall", "100ms", "--status-every", "100ms"];
/** DDSketch's relative accuracy α plus float rounding at bin boundaries (ADR 0003). */
const P99_BOUND = 0.01 + 1e-9;
/** HLL: within 1 % below 1 000 distinct (sparse), else 3 standard errors at p = 14 (ADR 0003). */
const usersBound = (distinct: number): number => (distinct < 1_000 ? 0.01 : (3 * 1.04) / 128);

describe("merge stage (real NATS)", () => {
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const s of stacks) await endStack(s);
  });
  const dir = tempDir("merge-stage");
  const events = makeRecording({ events: 4000, seed: 41 });
  const file = writeRecording(dir, events);

  /** A clean run: the stack, the recording, every process stopped gracefully; the `*` panes and all panes. */
  async function cleanRun(name: string, split: string[][]): Promise<CleanRun> {
    const s = await startStack(join(dir, name), split, MERGE_FLAGS, WORKER_FLAGS);
    stacks.push(s);
    const end = (await runBackfill(s.nats.url, file)).endOfRecordingTs;
    await waitForMergeEnd(s.nc, end);
    await Promise.all([...s.workers, s.merge].map((p) => stopGracefully(p)));
    return { star: await starPanes(s.nc), panes: await allPanes(s.nc), endOfRecordingTs: end };
  }

  /** The one-worker clean run: a fixture every case awaits (started by the first that needs it). */
  let oneRun: Promise<CleanRun> | undefined;
  const cleanOne = () => (oneRun ??= cleanRun("one", SPLIT_ONE));

  it("2 workers + merge give the same all-services panes as 1 worker + merge, byte for byte after dedupe", async () => {
    const one = await cleanOne();
    const two = await cleanRun("two", SPLIT_TWO);
    expect(one.star.size).toBeGreaterThan(100);
    const differing = [...one.star].filter(([k, v]) => two.star.get(k) !== v).map(([k]) => k);
    expect(differing.slice(0, 3)).toEqual([]);
    expect([...two.star.keys()].sort()).toEqual([...one.star.keys()].sort());
  }, 180_000);

  it("counts exactly and has users and p99 within the sketches' error; the services' sum over-counts users", async () => {
    const cfg = defaultCoreConfig();
    const last = lastPanes((await cleanOne()).panes);
    let compared = 0;
    let overCounted = 0;
    const expectedIds = new Set<string>();
    for (const policy of cfg.policies) {
      const lagMs = policy.watermark.kind === "arrival-lag" ? policy.watermark.lagMs : 0;
      for (const w of cfg.windows) {
        const truth = starTruth(events, { name: policy.name, lagMs, graceMs: policy.graceMs }, w.sizeMs);
        for (const [id, t] of truth) {
          expectedIds.add(id);
          const p = last.get(id);
          expect(p, id).toBeDefined();
          const v = (p as Pane).value;
          expect({ id, count: v.count, errors: v.errors }).toEqual({ id, count: t.count, errors: t.errors });
          // users is the estimate rounded to an integer: half a user more.
          const usersOff = Math.abs(v.users - t.users.size);
          expect(usersOff, `${id} users ${v.users} vs ${t.users.size}`).toBeLessThanOrEqual(
            usersBound(t.users.size) * t.users.size + 0.5,
          );
          const exact = exactQuantile(t.latencies, 0.99);
          expect(Math.abs((v.p99 as number) - exact) / exact, `${id} p99 ${v.p99} vs ${exact}`).toBeLessThanOrEqual(
            P99_BOUND,
          );
          if (t.count >= 200) {
            // The browser's old combination: the sum of the services' users in the same window.
            const start = (p as Pane).window.start;
            const perService = [...last.values()].filter(
              (q) =>
                q.policy === policy.name &&
                q.key.service !== ALL_SERVICES &&
                q.key.route === undefined &&
                q.window.start === start &&
                q.window.end - q.window.start === w.sizeMs,
            );
            const summed = perService.reduce((n, q) => n + q.value.users, 0);
            if (summed > 1.3 * t.users.size) overCounted++;
          }
          compared++;
        }
      }
    }
    // 3 policies × (8 windows of 10 s + 2 of 60 s) over the recording's 80 s.
    expect(compared).toBeGreaterThan(30);
    expect(overCounted).toBeGreaterThan(10);
    // No `*` pane the recording does not account for.
    const extra = [...last.keys()].filter((id) => last.get(id)?.key.service === ALL_SERVICES && !expectedIds.has(id));
    expect(extra.slice(0, 5)).toEqual([]);
  }, 180_000);

  it("SIGKILL of a worker (restarted from an older checkpoint) and of the merge operator at seeded points changes nothing after dedupe", async () => {
    const one = await cleanOne();
    const data = join(dir, "killed");
    const s = await startStack(data, SPLIT_TWO, MERGE_FLAGS, WORKER_FLAGS);
    stacks.push(s);
    const tap = new PaneTap(s.nc);
    // Fed step by step and held at each kill (harness/stepped-backfill.ts), so the kills land mid-input.
    const feed = new SteppedBackfill(s.nc, events, { batch: 50, runId: "merge-stage-killed" });
    expect(feed.endOfRecordingTs).toBe(one.endOfRecordingTs);
    const restoredFrom: unknown[] = [];
    const first = (events[0] as (typeof events)[number]).ingest_ts;
    const lastIn = (events.at(-1) as (typeof events)[number]).ingest_ts;
    const seed = killSeed(97);
    const points = killPoints(seed, 3, first, lastIn);
    logKillPlan("merge-stage", seed, points, first);
    for (let round = 0; round < 3; round++) {
      const victim = round === 1 ? "worker" : "merge";
      const id = victim === "merge" ? MERGE_ID : "engine-4-7";
      const at = points[round] as number;
      const cpDir = join(data, "w", "checkpoints", "engine-4-7");
      const victimProcess = victim === "merge" ? s.merge : (s.workers[1] as (typeof s.workers)[number]);
      // The worker is restarted from the older of two checkpoints of its own: both written first.
      // The merge operator's second restart resumes from a checkpoint of its own: one written first.
      const checkpointed = (): boolean =>
        victim === "worker"
          ? checkpointFiles(cpDir).length >= 2
          : round < 2 || checkpointFiles(join(data, "m", "checkpoints", MERGE_ID)).length >= 1;
      let logTime = -Infinity;
      await feed
        .feedUntil(
          () => checkpointed() && logTime >= at,
          async (t) => {
            // The merge's log time moves in ticks of its upstream partials (merge-fixtures.ts).
            const to = victim === "merge" ? Math.floor(t / PARTIAL_TICK_MS) * PARTIAL_TICK_MS : t;
            const seen = await waitForStatus(
              s.nc,
              (m) => m.worker === id && (m.logTime ?? 0) >= to,
              60_000,
              `${id} at log time +${to - first} ms`,
            );
            logTime = seen.logTime as number;
          },
          `round ${round} (seed ${seed}): ${id} at log time +${at - first} ms${victim === "worker" ? " with two checkpoints" : ""}`,
          {
            // Past the point, short of its checkpoints, the log time is held (nudges,
            // harness/stepped-backfill.ts): the merge asks for aligned checkpoints by wall time and
            // spaces them by its last hold (docs/operations.md, "Checkpoints"), which a loaded machine
            // stretches, while each step fed would carry the victim on towards the end of the input.
            hold: () => logTime >= at && !checkpointed(),
            settle: () => {
              const now = Date.now();
              return waitForStatus(
                s.nc,
                (m) => m.worker === id && m.wallTime > now,
                10_000,
                `${id}'s status after a nudge`,
              );
            },
          },
        )
        .catch((err: Error) => {
          throw new Error(`${err.message}\n${id}'s output:\n${victimProcess.output().slice(-4000)}`);
        });
      const context = `round ${round} (seed ${seed}): ${id} killed at log time +${logTime - first} ms`;
      console.log(`merge-stage: ${context} (input ends at +${lastIn - first} ms; ${feed.nudged} nudges so far)`);
      expect(logTime, context).toBeLessThan(lastIn);
      if (victim === "merge") {
        s.merge.child.kill("SIGKILL");
        await s.merge.exited;
        s.merge = startMerge(s.nats.url, join(data, "m"), MERGE_FLAGS);
        restoredFrom.push(((await s.merge.ready).merge as { restoredFrom: unknown }).restoredFrom);
      } else {
        const w = s.workers[1] as (typeof s.workers)[number];
        w.child.kill("SIGKILL");
        await w.exited;
        // Restarted from an older checkpoint than the merge stage has seen: the newer ones removed,
        // its partials since then replayed, and the merge stage ignores what it already has.
        const files = readdirSync(cpDir)
          .filter((f) => f.endsWith(".tmck"))
          .sort();
        expect(files.length).toBeGreaterThanOrEqual(2);
        for (const f of files.slice(1)) rmSync(join(cpDir, f));
        s.workers[1] = startEngine(s.nats.url, join(data, "w"), [...(SPLIT_TWO[1] as string[]), ...WORKER_FLAGS]);
        const ready = await (s.workers[1] as (typeof s.workers)[number]).ready;
        expect((ready.engine as { restoredFrom: unknown }).restoredFrom).toBe(join(cpDir, files[0] as string));
      }
    }
    const end = await feed.finish();
    await waitForMergeEnd(s.nc, end);
    await Promise.all([...s.workers, s.merge].map((p) => stopGracefully(p)));
    // The second restart of the merge operator resumed from a checkpoint of its own.
    expect(restoredFrom[1]).toMatch(/checkpoint-\d+\.tmck$/);
    const star = await starPanes(s.nc);
    // The restarts really replayed: more `*` panes were published than TM_PANES keeps after dedupe.
    await tap.stop(s.nc);
    const raw = tap.panes((p) => p.key.service === ALL_SERVICES).length;
    expect(raw, `seed ${seed}: * panes published vs deduplicated`).toBeGreaterThan(star.size);
    const differing = [...one.star].filter(([k, v]) => star.get(k) !== v).map(([k]) => k);
    expect(differing.slice(0, 3)).toEqual([]);
    expect([...star.keys()].sort()).toEqual([...one.star.keys()].sort());
  }, 180_000);

  it("runs as `tidemark merge` with its own id, and refuses a worker's checkpoint directory", async () => {
    await cleanOne();
    const s = stacks[0] as Stack;
    const wrong = startMerge(s.nats.url, join(dir, "one", "w"), ["--worker", "engine-0-7"]);
    expect(await wrong.exited).toBe(2);
    expect(wrong.output()).toContain("[TM_CHECKPOINT_MISMATCH]");
    expect(wrong.output()).toContain("written by an engine worker");
  }, 180_000);
});
