/**
 * Aligned checkpoints across both stages (docs/decisions/0031-aligned-checkpoints.md), against a
 * real nats-server: the merge operator coordinates checkpoints on TM_CHECKPOINTS; a completed n
 * names a file of every operator, and those files are one consistent cut (the merge operator's
 * checkpoint n holds exactly the partials each worker emitted before its own cut n); with one worker
 * stalled, checkpoint n waits for it and completes once it resumes, its alignment time exported;
 * every operator restarts from its file of the newest completed n and nothing changes after dedupe.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decodeCheckpoint } from "@tidemark/engine/runtime";
import type { CheckpointComplete } from "@tidemark/engine/protocol";
import {
  makeRecording,
  metricValue,
  readMessages,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { waitFor } from "../index.js";
import {
  endStack,
  MERGE_ID,
  starPanes,
  startMerge,
  startStack,
  waitForMergeEnd,
  type Stack,
} from "./merge-fixtures.js";

const SPLIT = [
  ["--partitions", "0-3", "--worker", "w-low"],
  ["--partitions", "4-7", "--worker", "w-high"],
];
const MERGE_FLAGS = ["--idle-timeout", "120s", "--checkpoint-every", "1s", "--status-every", "200ms"];

async function completes(s: Stack): Promise<CheckpointComplete[]> {
  return (await readMessages(s.nc, "TM_CHECKPOINTS"))
    .filter((m) => m.subject === "tm.checkpoints.complete")
    .map((m) => JSON.parse(m.body) as CheckpointComplete);
}

describe("aligned checkpoints (real NATS)", () => {
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const s of stacks) {
      for (const w of s.workers) if (w.child.exitCode === null) w.child.kill("SIGCONT");
      await endStack(s);
    }
  });

  it("complete as one consistent cut, wait for a stalled worker, and restart every operator from the newest", async () => {
    const dir = tempDir("merge-checkpoints");
    const first = makeRecording({ events: 5000, seed: 8 });
    const file = writeRecording(dir, first);
    const s = await startStack(dir, SPLIT, MERGE_FLAGS);
    stacks.push(s);
    const backfill = runBackfill(s.nats.url, file, ["--rate", "500", "--batch", "25"]);
    await waitFor(async () => (await completes(s)).length >= 2, 30_000, "two completed checkpoints");

    // One consistent cut: for each worker's partitions, the merge operator's checkpoint n has
    // been reported exactly up to the start of the tick the worker's checkpoint n keeps open.
    const c = (await completes(s))[1] as CheckpointComplete;
    expect(Object.keys(c.operators).sort()).toEqual([MERGE_ID, "w-high", "w-low"]);
    const header = (id: string) => decodeCheckpoint(readFileSync(c.operators[id] as string), id).header;
    const merge = header(MERGE_ID);
    expect(merge.barrier).toBe(c.n);
    expect(merge.merge?.lastBarrier).toBe(c.n);
    for (const id of ["w-low", "w-high"]) {
      const w = header(id);
      expect(w.barrier).toBe(c.n);
      for (const p of w.partitions)
        expect(merge.merge?.aligner.reportedTo[p], `${id} partition ${p}`).toBe(w.partials?.from);
    }

    // A stalled worker: the checkpoint started meanwhile waits for its barrier, holding the
    // other's partials, and completes once it resumes.
    const high = s.workers[1] as Stack["workers"][number];
    high.child.kill("SIGSTOP");
    // More input once the first is all sent and a checkpoint is aligning (the running worker's
    // barrier in, the stalled one's awaited), whatever the machine's pace: the merge starts the next
    // checkpoint only when its spacing allows (docs/operations.md, "Checkpoints": after a hold of more
    // than 50 ms, 100 × it), which a loaded machine can push past the end of any input fed before;
    // fed after, the running worker's partials come after its barrier n and are held.
    await backfill;
    const started = await waitForStatus(
      s.nc,
      (m) => m.worker === MERGE_ID && m.merge?.checkpoints?.aligning != null,
      60_000,
      "a checkpoint aligning while a worker is stalled",
    );
    const n = started.merge?.checkpoints?.aligning as number;
    const startMs = Math.max(...first.map((e) => e.ingest_ts as number)) + 1_000;
    const more = writeRecording(dir, makeRecording({ events: 2500, seed: 9, startMs }), "more.ndjson");
    const rest = runBackfill(s.nats.url, more, ["--rate", "500", "--batch", "25"]);
    const aligning = await waitForStatus(
      s.nc,
      (m) => m.worker === MERGE_ID && m.merge?.checkpoints?.aligning === n && (m.merge.checkpoints.held ?? 0) > 0,
      20_000,
      `checkpoint ${n} aligning, holding the running worker's partials`,
    );
    // Its first barrier came before this status: the merge operator's own status, still aligning n
    // two seconds (its wall clock) later, makes its alignment ≥ 2 s.
    await waitForStatus(
      s.nc,
      (m) => m.worker === MERGE_ID && m.wallTime >= aligning.wallTime + 2_000 && m.merge?.checkpoints?.aligning === n,
      20_000,
      `checkpoint ${n} still aligning 2 s after the first status showing it`,
    );
    expect((await completes(s)).some((x) => x.n === n)).toBe(false);
    high.child.kill("SIGCONT");
    await waitFor(async () => (await completes(s)).some((x) => x.n === n), 30_000, `checkpoint ${n} completed`);
    const stalled = (await completes(s)).find((x) => x.n === n) as CheckpointComplete;
    expect(stalled.alignmentMs).toBeGreaterThanOrEqual(2_000);
    const metricsUrl = ((await s.merge.ready).merge as { metrics: string }).metrics;
    const text = await (await fetch(metricsUrl)).text();
    expect(metricValue(text, "tidemark_merge_checkpoint_alignment_seconds_sum")).toBeGreaterThanOrEqual(2);
    expect(metricValue(text, "tidemark_merge_checkpoints_total", { outcome: "completed" })).toBeGreaterThanOrEqual(3);

    const end = (await rest).endOfRecordingTs;
    await waitForMergeEnd(s.nc, end);
    const before = await starPanes(s.nc);

    // SIGKILL everyone, restart: each restores its file of the newest completed checkpoint.
    for (const p of [...s.workers, s.merge]) p.child.kill("SIGKILL");
    await Promise.all([...s.workers, s.merge].map((p) => p.exited));
    const newest = (await completes(s)).at(-1) as CheckpointComplete;
    s.workers = SPLIT.map((args) => startEngine(s.nats.url, join(dir, "w"), args));
    s.merge = startMerge(s.nats.url, join(dir, "m"), MERGE_FLAGS);
    const ready = await Promise.all([...s.workers, s.merge].map((p) => p.ready));
    const restored = ready.map((r) => (r.engine ?? r.merge) as { worker: string; restoredFrom: string });
    for (const r of restored) expect(r.restoredFrom, r.worker).toBe(newest.operators[r.worker]);
    await waitForMergeEnd(s.nc, end);
    await Promise.all([...s.workers, s.merge].map((p) => stopGracefully(p)));
    const after = await starPanes(s.nc);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  }, 150_000);
});
