/**
 * The merge stage's watermark is the minimum over its upstream workers (docs/operations.md,
 * "Merge stage"): a stalled worker (SIGSTOP) holds it back and the merge operator's tm.status names
 * the partition and the worker; after the idle timeout of wall time the merge goes on without it,
 * and once resumed the worker's partials are taken again. A TM_PARTIALS body that does not decode
 * is refused, counted on tm.status and /metrics, and merges nothing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { jetstream } from "@nats-io/jetstream";
import {
  encodePartialBatch,
  PARTIAL_TICK_MS,
  partialsSubject,
  type EngineStatusMessage,
} from "@tidemark/engine/protocol";
import {
  makeRecording,
  metricValue,
  runBackfill,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { endStack, MERGE_ID, startStack, waitForMergeEnd, type Stack } from "./merge-fixtures.js";

const IDLE_S = 8;

describe("merge stage with a stalled worker (real NATS)", () => {
  let s: Stack | undefined;
  afterAll(async () => {
    const w = s?.workers[1];
    if (w?.child.exitCode === null) w.child.kill("SIGCONT");
    await endStack(s);
  });

  it("is held back by it and names it, goes on after the idle timeout, takes it back when resumed; refuses a malformed body", async () => {
    const dir = tempDir("merge-stall");
    const events = makeRecording({ events: 5000, seed: 5 });
    const file = writeRecording(dir, events);
    s = await startStack(
      dir,
      [
        ["--partitions", "0-3", "--worker", "fast"],
        ["--partitions", "4-7", "--worker", "slow"],
      ],
      ["--idle-timeout", `${IDLE_S}s`, "--status-every", "200ms"],
    );
    const stack = s;
    const mergeStatus = (ok: (m: EngineStatusMessage) => boolean, what: string, ms = 30_000) =>
      waitForStatus(stack.nc, (m) => m.worker === MERGE_ID && ok(m), ms, what);
    // About 10 s of wall time for 100 s of log time.
    const backfill = runBackfill(stack.nats.url, file, ["--rate", "500", "--batch", "25"]);
    // Under way with both workers heard: a worker that starts late (a loaded machine) has sent no
    // partials yet, its partitions are idle to the merge, and stopping it then holds nothing back.
    await mergeStatus(
      (m) => (m.merge?.batches.accepted ?? 0) > 20 && m.partitions.every((p) => p.logTime !== null),
      "the merge under way, every partition heard from",
    );

    // A body that is not a partial batch: refused, counted, nothing merged from it.
    await jetstream(stack.nc).publish(partialsSubject(0), new TextEncoder().encode("not a partial batch"));
    const refused = await mergeStatus((m) => m.merge?.batches.malformed === 1, "the malformed body counted");
    expect(refused.merge?.batches.overlap).toBe(0);
    // A batch cut for two merge partitions while this merge stage has one: refused and counted.
    const from = Math.floor(events[0]!.ingest_ts / PARTIAL_TICK_MS) * PARTIAL_TICK_MS;
    const foreign = { worker: "other", partitions: [0], tickMs: PARTIAL_TICK_MS, from, to: from + PARTIAL_TICK_MS };
    const body = encodePartialBatch({ ...foreign, clocks: [], deltas: [], mergePartitions: 2 });
    await jetstream(stack.nc).publish(partialsSubject(0), body);
    await mergeStatus((m) => m.merge?.batches.mismatch === 1, "the batch of another mergePartitions counted");

    const slow = stack.workers[1] as Stack["workers"][number];
    slow.child.kill("SIGSTOP");
    const stoppedAt = Date.now();
    const held = await mergeStatus(
      (m) => m.merge?.heldBackByWorker === "slow",
      "the merge naming the stalled worker",
      IDLE_S * 1000,
    );
    expect(held.heldBackBy).toBeGreaterThanOrEqual(4);
    expect(held.heldBackBy).toBeLessThanOrEqual(7);
    // Its watermark waits: the fast worker's log time moves on, the merge's stays behind it.
    const fast = await waitForStatus(
      stack.nc,
      (m) => m.worker === "fast" && (m.logTime ?? 0) > (held.logTime ?? 0) + 5_000,
      20_000,
      "the fast worker ahead",
    );
    const stillHeld = await mergeStatus(() => true, "a merge status");
    if (Date.now() - stoppedAt < IDLE_S * 1000 - 1_000) {
      expect(stillHeld.logTime ?? 0).toBeLessThan((fast.logTime ?? 0) - 2_000);
      expect(stillHeld.merge?.heldBackByWorker).toBe("slow");
    }

    // Unheard of for the idle timeout: left out, the merge follows the fast worker.
    const movedOn = await mergeStatus(
      (m) => (m.logTime ?? 0) > (held.logTime ?? 0) + 10_000 && m.merge?.heldBackByWorker === null,
      "the merge going on without the stalled worker",
      30_000,
    );
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(IDLE_S * 1000 - 500);
    expect(movedOn.heldBackBy).toBeNull();

    slow.child.kill("SIGCONT");
    const end = (await backfill).endOfRecordingTs;
    await waitForMergeEnd(stack.nc, end);
    // The workers stopped, nothing more arrives: once two statuses in a row count the same batches,
    // the merge operator's metric must say exactly what its status says.
    for (const w of stack.workers) await stopGracefully(w);
    let seen = -1;
    const last = await mergeStatus((m) => {
      const accepted = m.merge?.batches.accepted ?? -1;
      const settled = accepted === seen;
      seen = accepted;
      return settled;
    }, "the merge's counts settled");
    expect(last.merge?.batches.overlap).toBe(0);
    expect(last.merge?.batches.malformed).toBe(1);
    expect(last.merge?.batches.mismatch).toBe(1);
    const metricsUrl = (((await stack.merge.ready).merge as { metrics: string }) ?? {}).metrics;
    const text = await (await fetch(metricsUrl)).text();
    expect(metricValue(text, "tidemark_merge_partial_batches_total", { outcome: "malformed" })).toBe(1);
    expect(metricValue(text, "tidemark_merge_partial_batches_total", { outcome: "mismatch" })).toBe(1);
    expect(metricValue(text, "tidemark_merge_partial_batches_total", { outcome: "accepted" })).toBe(
      last.merge?.batches.accepted,
    );
  }, 120_000);
});
