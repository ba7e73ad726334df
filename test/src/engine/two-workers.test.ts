/**
 * Partition ownership (docs/operations.md, "Partition ownership"): two workers with disjoint
 * partitions and their own checkpoint directories produce, together, the same per-service panes as
 * one worker over all partitions. Early and late panes fire on each worker's own log time, so their
 * number is not compared; the on-time value (of every window that was open when the recording
 * began), the final value and the last value of every pane id are. (A window first seen after its
 * on-time point gets its first pane as "on-time" or "late" depending on how log time moved: only
 * its values compare.) The same id restarted for other partitions takes each from the final
 * checkpoint that holds it (docs/operations.md, "Rescaling").
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { partitionOf, type Pane, type PaneValue, type TelemetryEvent } from "@tidemark/engine/protocol";
import { decodeCheckpoint } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import type { CliProcess } from "../harness/processes.js";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  makeRecording,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  truthByPane,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

/** Per pane id: the value of its on-time pane, of its final pane, and its last value. */
function settledValues(
  panes: Iterable<Pane>,
  openFrom: number,
): Map<string, Partial<Record<"on-time" | "final" | "last", PaneValue>>> {
  const out = new Map<string, Partial<Record<"on-time" | "final" | "last", PaneValue>>>();
  const lastSeq = new Map<string, number>();
  for (const p of panes) {
    if (p.kind === "retract") continue;
    const v = out.get(p.id) ?? {};
    if (p.kind === "final" || (p.kind === "on-time" && p.window.end >= openFrom)) v[p.kind] = p.value;
    if (p.seq > (lastSeq.get(p.id) ?? -1)) {
      lastSeq.set(p.id, p.seq);
      v.last = p.value;
    }
    out.set(p.id, v);
  }
  return out;
}

/**
 * The recording's truth, independent of the engine: per policy and window size, every
 * service-level pane id's final (count, errors) from the raw events (engine-fixtures' truthByPane),
 * beside what a run's last panes say. Log time at an event's arrival is its own ingest_ts for each
 * worker too (partitions are merged in ingest_ts order), so the truth is the same for one worker
 * and for two.
 */
function againstTruth(events: readonly TelemetryEvent[], panes: Map<string, Pane>) {
  const last = lastPanes(panes.values());
  const cfg = defaultCoreConfig();
  const rows: { policy: string; sizeMs: number; truth: Map<string, unknown>; got: Map<string, unknown> }[] = [];
  for (const policy of cfg.policies) {
    const lagMs = policy.watermark.kind === "arrival-lag" ? policy.watermark.lagMs : 0;
    for (const w of cfg.windows) {
      const truth = truthByPane(events, { name: policy.name, lagMs, graceMs: policy.graceMs }, w.sizeMs);
      const got = new Map<string, unknown>();
      for (const [id, pane] of last)
        if (
          id.startsWith(`${policy.name}|`) &&
          pane.key.route === undefined &&
          pane.window.end - pane.window.start === w.sizeMs
        )
          got.set(id, { count: pane.value.count, errors: pane.value.errors });
      rows.push({ policy: policy.name, sizeMs: w.sizeMs, truth, got });
    }
  }
  return rows;
}

describe("two workers with split partitions", () => {
  const servers: TestNats[] = [];
  const conns: NatsConnection[] = [];
  afterAll(async () => {
    for (const c of conns) await c.close();
    for (const s of servers) await s.stop();
  });

  async function run(file: string, data: string, split: string[][]): Promise<Map<string, Pane>> {
    const nats = await startTestNats();
    servers.push(nats);
    const nc = await connectNats(nats.url);
    conns.push(nc);
    const workers: CliProcess[] = split.map((args) => startEngine(nats.url, data, args));
    const ready = await Promise.all(workers.map((w) => w.ready));
    const summary = await runBackfill(nats.url, file);
    for (const r of ready) {
      const worker = (r.engine as { worker: string }).worker;
      await waitForStatus(
        nc,
        (s) => s.worker === worker && (s.logTime ?? 0) >= summary.endOfRecordingTs,
        60_000,
        `${worker} at the end`,
      );
    }
    await Promise.all(workers.map((w) => stopGracefully(w)));
    return dedupePanes(await readStream(nc, "TM_PANES"));
  }

  it("produce together the same on-time, final and last values as one worker", async () => {
    const dir = tempDir("two-workers");
    const events = makeRecording({ events: 3000, seed: 23 });
    const file = writeRecording(dir, events);
    const one = await run(file, join(dir, "one"), [[]]);
    const two = await run(file, join(dir, "two"), [
      ["--partitions", "0-3"],
      ["--partitions", "4-7"],
    ]);

    // Both runs hold exactly the recording's truth, for every policy, window size and service.
    let compared = 0;
    for (const run of [one, two])
      for (const { policy, sizeMs, truth, got } of againstTruth(events, run)) {
        expect(got, `${policy} ${sizeMs} ms`).toEqual(truth);
        compared += truth.size;
      }
    expect(compared).toBeGreaterThan(200);

    const openFrom = events[0]?.ingest_ts ?? 0;
    const a = settledValues(one.values(), openFrom);
    const b = settledValues(two.values(), openFrom);
    expect(a.size).toBeGreaterThan(500);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    const differing = [...a].filter(([id, v]) => JSON.stringify(b.get(id)) !== JSON.stringify(v)).map(([id]) => id);
    expect(differing.slice(0, 3).map((id) => ({ id, one: a.get(id), two: b.get(id) }))).toEqual([]);
    expect([...a.values()].filter((v) => v["on-time"] !== undefined).length).toBeGreaterThan(300);
    // Each worker published only its own services: the split really happened.
    const servicesOf = (lo: number, hi: number): Set<string> =>
      new Set(events.map((e) => e.service).filter((s) => partitionOf(s, 8) >= lo && partitionOf(s, 8) <= hi));
    expect(servicesOf(0, 3).size).toBeGreaterThan(0);
    expect(servicesOf(4, 7).size).toBeGreaterThan(0);

    // Re-split under the same id: the worker takes partitions 0-3 from its own final checkpoint and
    // 4-5 from engine-4-7's, each resuming right after it (docs/operations.md, "Rescaling").
    const finals = ["engine-0-3", "engine-4-7"].map((w) => newestFile(join(dir, "two", "checkpoints", w)));
    const resplit = startEngine(servers[1]?.url ?? "", join(dir, "two"), [
      "--worker",
      "engine-0-3",
      "--partitions",
      "0-5",
    ]);
    const cut = ((await resplit.ready).engine as { restoredCut: { cut: string; resumeAfter: Record<string, number> } })
      .restoredCut;
    expect(cut.cut).toBe("the final checkpoints of a clean stop");
    for (const file of finals) {
      const h = decodeCheckpoint(readFileSync(file), file).header;
      h.partitions
        .filter((p) => p <= 5)
        .forEach((p) =>
          expect(cut.resumeAfter[String(p)], `partition ${p}`).toBe(h.offsets[h.partitions.indexOf(p)]?.lastSeq),
        );
    }
    expect(Object.keys(cut.resumeAfter).map(Number)).toEqual([0, 1, 2, 3, 4, 5]);
    await stopGracefully(resplit);
  });
});

/** The newest checkpoint file of an operator's directory. */
function newestFile(dir: string): string {
  const names = readdirSync(dir).filter((f) => /^checkpoint-\d+\.tmck$/.test(f));
  return join(dir, names.sort().at(-1) as string);
}
