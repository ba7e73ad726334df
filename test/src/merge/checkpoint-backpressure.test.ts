/**
 * Aligned checkpoints under backpressure (docs/decisions/0035-backpressure.md, "Aligned
 * checkpoints"): a worker and the merge operator read a real nats-server through a protocol proxy
 * (harness/nats-proxy.ts) that holds back every PubAck TM_PANES sends for STALL_MS, six times the
 * checkpoint timeout given, and on until a checkpoint has waited three timeouts for its acks (on a
 * loaded machine the next checkpoint may start seconds into the stall: docs/operations.md,
 * "Checkpoints", spaces them by the last one's hold). Both hold their input; the checkpoint in flight is cut, waits for its
 * panes' acks (never durable ahead of them), and its operators say so (tm.status `backpressure`,
 * the `tm.checkpoint-waiting.*` notices): it is not aborted, and completes once the acks come. The
 * held input is in the worker's log.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { CheckpointComplete, EngineStatusMessage } from "@tidemark/engine/protocol";
import { startTestNats, waitFor, type TestNats } from "../index.js";
import { isPanesAck, startNatsProxy, type NatsProxy } from "../harness/nats-proxy.js";
import type { CliProcess } from "../harness/processes.js";
import { connectNats, readMessages, startEngine, tempDir } from "../engine/engine-fixtures.js";
import { LogFeed } from "../engine/log-feed.js";
import { MERGE_ID, startMerge } from "./merge-fixtures.js";

const CONFIG = {
  windows: ["1s", "10s"],
  referenceHorizon: "5s",
  policies: [
    {
      name: "fast",
      label: "fast: 200 ms",
      watermark: { kind: "arrival-lag", lag: "200ms" },
      grace: 0,
      earlyEvery: "100ms",
      mode: "accumulating",
    },
  ],
};
const TIMEOUT_MS = 2_000;
const STALL_MS = 12_000;
/** Three checkpoint timeouts: a checkpoint waiting that long for its acks was not aborted for it. */
const WAITED_MS = 3 * TIMEOUT_MS;
const COMMON = [
  "--partition-count",
  "2",
  "--checkpoint-every",
  "500ms",
  "--checkpoint-timeout",
  `${TIMEOUT_MS}ms`,
  "--status-every",
  "250ms",
];
/**
 * The merge's window is a quarter of the worker's: the merge publishes about as often as the worker,
 * from the worker's partials, so with equal windows it could run out of input (the worker held) just
 * short of a full window, and never be held.
 */
const WORKER_FLAGS = ["--max-in-flight", "32"];
const MERGE_FLAGS = ["--max-in-flight", "8"];
const WORKER = "w-bp";

describe("aligned checkpoints while TM_PANES acknowledges nothing", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let proxy: NatsProxy;
  let worker: CliProcess;
  let merge: CliProcess;
  let feeding = true;
  let feed: Promise<void>;
  const statuses: EngineStatusMessage[] = [];
  const waits: Array<{ operator: string; n: number }> = [];
  let before: { completed: number; aborted: number };
  /** Wall clock just before `before` was read: the merge's log lines from then on are the stall's. */
  let beforeAt = 0;
  let stallFrom = 0;
  let stallTo = 0;
  let completedAfter: CheckpointComplete | undefined;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    proxy = await startNatsProxy(nats.port);
    const dir = tempDir("checkpoint-backpressure");
    const config = join(dir, "tidemark.config.json");
    writeFileSync(config, JSON.stringify(CONFIG));
    worker = startEngine(proxy.url, join(dir, "w"), [
      "--config",
      config,
      "--worker",
      WORKER,
      ...COMMON,
      ...WORKER_FLAGS,
    ]);
    // A long idle timeout: a worker held for the whole stall is not left out of the checkpoint.
    merge = startMerge(proxy.url, join(dir, "m"), [
      "--config",
      config,
      "--idle-timeout",
      "120s",
      ...COMMON,
      ...MERGE_FLAGS,
    ]);
    await Promise.all([worker.ready, merge.ready]);
    nc.subscribe("tm.status", {
      callback: (_e, m) => void statuses.push(JSON.parse(m.string()) as EngineStatusMessage),
    });
    nc.subscribe("tm.checkpoint-waiting.*", {
      callback: (_e, m) => void waits.push(JSON.parse(m.string()) as { operator: string; n: number }),
    });
    const log = new LogFeed(() => nc, 2);
    feed = (async () => {
      let t = 0;
      while (feeding) {
        t = Math.max(Date.now(), t + 1);
        await log.events(t, 10);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await waitFor(async () => (await outcomes()).completed >= 2, 30_000, "two completed checkpoints");
    beforeAt = Date.now();
    before = await outcomes();

    proxy.toClient = (f) => (isPanesAck(f) ? "hold" : "pass");
    stallFrom = Date.now();
    await new Promise((r) => setTimeout(r, STALL_MS));
    await waitFor(
      () => statuses.some((s) => s.worker === WORKER && (s.backpressure?.checkpointWaiting?.waitedMs ?? 0) > WAITED_MS),
      60_000,
      `the worker's checkpoint waiting ${WAITED_MS} ms for its acks`,
    );
    stallTo = Date.now();
    proxy.toClient = () => "pass";
    proxy.release();
    await waitFor(
      async () => (completedAfter = (await completes()).find((c) => c.completedAt > stallTo)) !== undefined,
      30_000,
      "a checkpoint completed after the stall",
    );
    feeding = false;
    await feed;
  }, 180_000);

  afterAll(async () => {
    feeding = false;
    for (const p of [worker, merge]) if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
    await nc?.close();
    await proxy?.close();
    await nats?.stop();
  });

  async function completes(): Promise<CheckpointComplete[]> {
    return (await readMessages(nc, "TM_CHECKPOINTS"))
      .filter((m) => m.subject === "tm.checkpoints.complete")
      .map((m) => JSON.parse(m.body) as CheckpointComplete);
  }

  async function outcomes(): Promise<{ completed: number; aborted: number }> {
    const stored = await readMessages(nc, "TM_CHECKPOINTS");
    const count = (s: string): number => stored.filter((m) => m.subject === s).length;
    return { completed: count("tm.checkpoints.complete"), aborted: count("tm.checkpoints.abort") };
  }

  it("aborts nothing: the checkpoint in flight waits for its acks, says so, and completes once they come", async () => {
    expect((await outcomes()).aborted).toBe(before.aborted);
    // From the stall on: with a 2 s timeout, a checkpoint of the warm-up may time out on a loaded machine.
    const aborts = logLines(merge).filter((l) => l.time >= beforeAt && /checkpoint \d+ aborted/.test(l.msg));
    expect(aborts).toEqual([]);
    // Started before or during the stall, completed after it: it waited, rather than being given up.
    expect(completedAfter?.startedAt).toBeLessThan(stallTo);
    expect(completedAfter?.completedAt).toBeGreaterThan(stallTo);
    const during = (who: string): EngineStatusMessage[] =>
      statuses.filter((s) => s.worker === who && s.wallTime > stallFrom + 2_000 && s.wallTime < stallTo);
    // Both held by TM_PANES; the worker's checkpoint cut and waiting for its acks; notices sent.
    const ctx = (who: string): string =>
      JSON.stringify(during(who).map((s) => [s.wallTime - stallFrom, s.backpressure?.heldBy, s.backpressure?.streams]));
    expect(
      during(WORKER).some((s) => s.backpressure?.heldBy === "TM_PANES"),
      ctx(WORKER),
    ).toBe(true);
    expect(
      during(MERGE_ID).some((s) => s.backpressure?.heldBy === "TM_PANES"),
      ctx(MERGE_ID),
    ).toBe(true);
    const waiting = during(WORKER).map((s) => s.backpressure?.checkpointWaiting?.waitedMs ?? 0);
    expect(Math.max(...waiting)).toBeGreaterThan(WAITED_MS);
    expect(waits.some((w) => w.operator === WORKER)).toBe(true);
    // In the log when it held half of a 10 s window or more (at most every 30 s), not once per hold.
    const held = worker
      .output()
      .split("\n")
      .filter((l) => l.includes("input held"));
    expect(held.length).toBeGreaterThanOrEqual(1);
    expect(held.length).toBeLessThan(5);
  });
});

/** The JSON lines of a process's log (pino: `time` in ms, `msg`). */
function logLines(p: CliProcess): Array<{ time: number; msg: string }> {
  return p
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { time: number; msg: string });
}
