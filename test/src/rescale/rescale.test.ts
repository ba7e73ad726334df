/**
 * Elastic workers (docs/decisions/0057-elastic-workers.md; docs/operations.md, "Rescaling")
 * against a real nats-server, the whole dataflow on one data directory as `tidemark up` runs it.
 * A recording is fed step by step while the workers go 1 → 2 → 3 → 1 and the merge partitions
 * 1 → 2 (and, from a savepoint, 2 → 1): a clean stop (SIGTERM) splits the final checkpoints, a crash (SIGKILL of every role) is
 * restored from an offline savepoint of the newest aligned checkpoint, at 3 workers and 2 merge
 * operators, and a clean stop gathers three workers' grouped state into one. Every restore resumes
 * each partition exactly after its cut — the events read again are exactly those the killed
 * workers had read past the cut, counted from TM_EVENTS — no merge operator ever sees an
 * overlapping batch, and every pane id settles on the value a straight run gives.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { decodeCheckpoint } from "@tidemark/engine/runtime";
import { startTestNats, waitFor, type TestNats } from "../index.js";
import { SteppedBackfill } from "../harness/stepped-backfill.js";
import { spawnTidemark } from "../harness/processes.js";
import {
  connectNats,
  makeRecording,
  metricValue,
  readMessages,
  runBackfill,
  tempDir,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { waitForMergeEnd } from "../merge/merge-fixtures.js";
import {
  caughtUp,
  cutOf,
  eventsAfter,
  eventsByPartition,
  eventsRead,
  feedShare,
  sameSettled,
  settledPanes,
  startMergeRole,
  startWorker,
  type Role,
} from "./dataflow.js";

const P = 8;
const events = makeRecording({ events: 8000, seed: 34 });

describe("elastic workers (real NATS)", () => {
  const servers: TestNats[] = [];
  const roles: Role[] = [];
  const conns: NatsConnection[] = [];
  afterAll(async () => {
    for (const r of roles) if (r.p.child.exitCode === null && r.p.child.signalCode === null) r.p.child.kill("SIGKILL");
    for (const nc of conns) await nc.close().catch(() => undefined);
    for (const s of servers) await s.stop();
  });

  async function nats(): Promise<{ url: string; nc: NatsConnection }> {
    const s = await startTestNats();
    servers.push(s);
    const nc = await connectNats(s.url);
    conns.push(nc);
    return { url: s.url, nc };
  }

  /** The straight run: one worker, one merge operator, the whole recording backfilled (run once). */
  let straightRun: Promise<Map<string, string>> | undefined;
  const straight = (dir: string): Promise<Map<string, string>> => (straightRun ??= runStraight(dir));
  async function runStraight(dir: string): Promise<Map<string, string>> {
    const { url, nc } = await nats();
    const data = join(dir, "straight");
    const merge = await startMergeRole(url, data);
    const worker = await startWorker(url, data, "0-7");
    roles.push(merge, worker);
    const summary = await runBackfill(url, writeRecording(dir, events));
    await waitForMergeEnd(nc, summary.endOfRecordingTs);
    await caughtUp(nc, [worker], summary.endOfRecordingTs);
    for (const r of [worker, merge]) {
      r.p.child.kill("SIGTERM");
      await r.p.exited;
    }
    return settledPanes(nc);
  }

  it("1 → 2 → 3 → 1 workers and 1 → 2 merge partitions: each restore reads only what its cut does not cover, panes settle as a straight run's", async () => {
    const dir = tempDir("rescale");
    const want = await straight(dir);
    const { url, nc } = await nats();
    const data = join(dir, "data");
    const feed = new SteppedBackfill(nc, events, { runId: "rescale" });
    let workers: Role[] = [];
    let merges: Role[] = [];
    let read = 0;
    let readAgain = 0;
    const launch = async (ranges: string[], extra: string[] = []): Promise<Role[]> => {
      const started = await Promise.all(ranges.map((r) => startWorker(url, data, r, extra)));
      roles.push(...started);
      return started;
    };
    const feedTo = (share: number): Promise<void> => feedShare(feed, nc, () => workers, share * events.length);
    /** Stops the workers (the input held, all read): what they read is counted. */
    const stopWorkers = async (signal: "SIGTERM" | "SIGKILL"): Promise<void> => {
      for (const w of workers) read += await eventsRead(w);
      for (const w of workers) w.p.child.kill(signal);
      await Promise.all(workers.map((w) => w.p.exited));
    };
    /** Every partition resumes after the position `files` name for it. */
    const expectResumeAt = (started: Role[], at: (p: number) => number, context: string): void => {
      for (const w of started) {
        const cut = cutOf(w);
        expect(cut, `${w.id}: ${context}`).not.toBeNull();
        for (const [p, seq] of Object.entries(cut?.resumeAfter ?? {}))
          expect(seq, `${w.id} partition ${p}: ${context}`).toBe(at(Number(p)));
      }
    };

    merges = [await startMergeRole(url, data)];
    workers = await launch(["0-7"]);
    roles.push(...merges);

    // 1 → 2 by a clean stop: the final checkpoint is split by partition, nothing is read again.
    await feedTo(0.25);
    await stopWorkers("SIGTERM");
    const finals = newestFiles(join(data, "checkpoints"), ["engine-0-7"]);
    workers = await launch(["0-3", "4-7"]);
    expectResumeAt(workers, (p) => offsetIn(finals, p), "after the clean stop of engine-0-7");
    for (const w of workers) expect(cutOf(w)?.cut).toBe("the final checkpoints of a clean stop");

    // 2 → 3 workers and 1 → 2 merge partitions after a crash of every role: the newest aligned
    // checkpoint, saved offline as a savepoint, restored by every role.
    await feedTo(0.45);
    await waitForCompleted(nc, ["engine-0-3", "engine-4-7"]);
    // The coordinator is held, so no checkpoint covers what the workers read from here on: the crash
    // loses it, and the restore reads it again.
    for (const m of merges) m.p.child.kill("SIGSTOP");
    await feedTo(0.5);
    await stopWorkers("SIGKILL");
    for (const m of merges) m.p.child.kill("SIGKILL");
    await Promise.all(merges.map((m) => m.p.exited));
    const refused = spawnTidemark([
      "engine",
      "--nats",
      url,
      "--data",
      data,
      "--partitions",
      "0-2",
      "--metrics-port",
      "0",
    ]);
    await expect(refused.ready).rejects.toThrow(/TM_CHECKPOINT_ROLLBACK[\s\S]*--from-savepoint/);
    const sp = join(dir, "savepoint");
    const made = spawnTidemark(["savepoint", "--offline", "--data", data, "--to", sp]);
    expect(await made.exited).toBe(0);
    const manifest = JSON.parse(readFileSync(join(sp, "savepoint.json"), "utf8")) as {
      cut: string;
      epoch: number;
      operators: Array<{ id: string; file: string }>;
    };
    expect(manifest.cut).toMatch(/^aligned checkpoint \d+$/);
    expect(manifest.epoch).toBe(1);
    expect(manifest.operators.map((o) => o.id).sort()).toEqual(["engine-0-3", "engine-4-7", "merge-0"]);
    const cutFiles = manifest.operators.map((o) => join(sp, o.file));
    const stored = await eventsByPartition(nc, P);
    for (let p = 0; p < P; p++) readAgain += eventsAfter(stored, p, offsetIn(cutFiles, p));
    const two = ["--merge-partitions", "2", "--from-savepoint", sp];
    merges = [
      await startMergeRole(url, data, [...two, "--merge-partition", "0"]),
      await startMergeRole(url, data, [...two, "--merge-partition", "1"]),
    ];
    roles.push(...merges);
    for (const m of merges) expect(cutOf(m)?.cut, m.id).toMatch(/^savepoint .*: merge partition 0 of 1$/);
    workers = await launch(["0-2", "3-5", "6-7"], two);
    expectResumeAt(workers, (p) => offsetIn(cutFiles, p), `restored from ${manifest.cut}`);

    // 3 → 1 by a clean stop: three grouped states gathered into one worker (the epoch goes on without the flag).
    await feedTo(0.75);
    await waitForCompleted(nc, ["engine-0-2", "engine-3-5", "engine-6-7"]);
    await stopWorkers("SIGTERM");
    const finals3 = newestFiles(join(data, "checkpoints"), ["engine-0-2", "engine-3-5", "engine-6-7"]);
    workers = await launch(["0-7"], ["--merge-partitions", "2"]);
    expectResumeAt(workers, (p) => offsetIn(finals3, p), "after the clean stop of three workers");
    expect(workers[0]?.ready.epoch).toBe(1);

    const end = await feed.finish();
    await caughtUp(nc, workers, end);
    await waitForMergeEnd(nc, end);
    await stopWorkers("SIGTERM");
    for (const m of merges) {
      const text = await (await fetch(m.ready.metrics as string)).text();
      expect(metricValue(text, "tidemark_merge_partial_batches_total", { outcome: "overlap" }) ?? 0, m.id).toBe(0);
      m.p.child.kill("SIGTERM");
      await m.p.exited;
    }
    console.log(
      `rescale: ${read} events read for ${events.length} in the recording; ${readAgain} read again after the crash`,
    );
    expect(read).toBe(events.length + readAgain);
    expect(readAgain).toBeGreaterThan(0);
    expect(sameSettled(await settledPanes(nc), want)).toEqual({ missing: [], extra: [], differ: [] });
  }, 240_000);

  it("a savepoint taken mid-run, every role restarted from it at 3 workers and 1 merge partition: panes settle as a straight run's", async () => {
    const dir = tempDir("savepoint");
    const want = await straight(dir);
    const { url, nc } = await nats();
    const data = join(dir, "data");
    const feed = new SteppedBackfill(nc, events, { runId: "savepoint" });
    const two = ["--merge-partitions", "2"];
    const merges = [
      await startMergeRole(url, data, [...two, "--merge-partition", "0"]),
      await startMergeRole(url, data, [...two, "--merge-partition", "1"]),
    ];
    let workers = await Promise.all(["0-3", "4-7"].map((r) => startWorker(url, data, r, two)));
    roles.push(...merges, ...workers);
    const feedTo = (share: number): Promise<void> => feedShare(feed, nc, () => workers, share * events.length);
    await feedTo(0.4);
    const sp = join(dir, "savepoint");
    const took = spawnTidemark(["savepoint", "--nats", url, "--to", sp, "--timeout", "60s"]);
    expect(await took.exited, took.output()).toBe(0);
    const line = JSON.parse(
      took
        .output()
        .split("\n")
        .find((l) => l.startsWith('{"savepoint"')) as string,
    ) as {
      savepoint: { cut: string; epoch: number; operators: string[] };
    };
    expect(line.savepoint.cut).toMatch(/^aligned checkpoint \d+$/);
    expect(line.savepoint.epoch).toBe(1);
    expect(line.savepoint.operators.sort()).toEqual(["engine-0-3", "engine-4-7", "merge-0", "merge-1"]);
    // The run goes on past the savepoint, then every role dies: what they did after it is rolled back.
    await feedTo(0.7);
    for (const r of [...workers, ...merges]) r.p.child.kill("SIGKILL");
    await Promise.all([...workers, ...merges].map((r) => r.p.exited));
    const manifest = JSON.parse(readFileSync(join(sp, "savepoint.json"), "utf8")) as {
      operators: Array<{ file: string }>;
    };
    const cutFiles = manifest.operators.map((o) => join(sp, o.file));
    // One merge operator gathers both old merge partitions' state of the savepoint's aligned checkpoint.
    const again = await startMergeRole(url, data, ["--from-savepoint", sp]);
    expect(cutOf(again)?.cut).toMatch(
      /^savepoint \S+ \(aligned checkpoint \d+\): merge partition 0 of 2, merge partition 1 of 2$/,
    );
    workers = await Promise.all(["0-1", "2-4", "5-7"].map((r) => startWorker(url, data, r, ["--from-savepoint", sp])));
    roles.push(again, ...workers);
    for (const w of workers) {
      expect(w.ready.epoch).toBe(1);
      for (const [p, seq] of Object.entries(cutOf(w)?.resumeAfter ?? {}))
        expect(seq, `${w.id} partition ${p}`).toBe(offsetIn(cutFiles, Number(p)));
    }
    const end = await feed.finish();
    await caughtUp(nc, workers, end);
    await waitForMergeEnd(nc, end);
    const text = await (await fetch(again.ready.metrics as string)).text();
    // The killed workers' batches after the savepoint are ignored, and nothing overlaps.
    expect(metricValue(text, "tidemark_merge_partial_batches_total", { outcome: "stale" }) ?? 0).toBeGreaterThan(0);
    expect(metricValue(text, "tidemark_merge_partial_batches_total", { outcome: "overlap" }) ?? 0).toBe(0);
    for (const r of [...workers, again]) {
      r.p.child.kill("SIGTERM");
      await r.p.exited;
    }
    expect(sameSettled(await settledPanes(nc), want)).toEqual({ missing: [], extra: [], differ: [] });
  }, 240_000);
}); /** The newest checkpoint file of each operator. */
function newestFiles(root: string, operators: string[]): string[] {
  return operators.map((op) => {
    const dir = join(root, op);
    const names = readdirSorted(dir);
    return join(dir, names.at(-1) as string);
  });
}

function readdirSorted(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => /^checkpoint-\d{12}\.tmck$/.test(n))
    .sort();
}

/** The stream sequence the files' checkpoint of partition p resumes after (read independently of the engine). */
function offsetIn(files: readonly string[], p: number): number {
  for (const f of files) {
    const h = decodeCheckpoint(readFileSync(f), f).header;
    if (h.merge !== undefined) continue;
    const i = h.partitions.indexOf(p);
    if (i >= 0) return h.offsets[i]?.lastSeq as number;
  }
  throw new Error(`no file of partition ${p} in ${files.join(", ")}`);
}

/** An aligned checkpoint completed with a file of each of `workers`. */
async function waitForCompleted(nc: NatsConnection, workers: string[]): Promise<void> {
  await waitFor(
    async () =>
      (await readMessages(nc, "TM_CHECKPOINTS")).some((m) => {
        if (m.subject !== "tm.checkpoints.complete") return false;
        const ops = Object.keys((JSON.parse(m.body) as { operators: Record<string, string> }).operators);
        return workers.every((w) => ops.includes(w));
      }),
    60_000,
    `an aligned checkpoint with ${workers.join(", ")}`,
  );
}
