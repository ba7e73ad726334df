/**
 * Batched transport, replayed (docs/decisions/0012-batched-transport.md): every TM_PANES and TM_LATE
 * message is what the core emitted for one input item on one subject, under a `Nats-Msg-Id` fixed
 * by that item's place in TM_EVENTS. A run killed with SIGKILL and restored from its checkpoints
 * emits again what it had published past the checkpoint, under the same ids with the same
 * content: after the streams' dedupe it has stored exactly the clean run's messages, id for id
 * (pipelineLagMs, the wall-clock field, aside). Real engine processes, a real nats-server.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { paneBatchLines, type Pane } from "@tidemark/engine/protocol";
import { decodeCheckpoint } from "@tidemark/engine/runtime";
import { startTestNats, waitFor, type TestNats } from "../index.js";
import type { CliProcess } from "../harness/processes.js";
import {
  connectNats,
  makeRecording,
  readMessages,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

const events = makeRecording({ events: 2500, seed: 23 });

describe("batched pane and late transport under replay", () => {
  const servers: TestNats[] = [];
  const conns: NatsConnection[] = [];
  const engines: CliProcess[] = [];
  const dir = tempDir("batch-ids");
  const file = writeRecording(dir, events);

  afterAll(async () => {
    for (const e of engines) if (e.child.exitCode === null) e.child.kill("SIGKILL");
    for (const c of conns) await c.close();
    for (const s of servers) await s.stop();
  });

  async function server(): Promise<{ url: string; nc: NatsConnection }> {
    const nats = await startTestNats();
    servers.push(nats);
    const nc = await connectNats(nats.url);
    conns.push(nc);
    return { url: nats.url, nc };
  }

  function engine(url: string, data: string): CliProcess {
    const p = startEngine(url, data, ["--checkpoint-min-wall", "50ms"]);
    engines.push(p);
    return p;
  }

  /** Message id → the message's lines with the wall-clock field zeroed, for TM_PANES and TM_LATE. */
  async function stored(nc: NatsConnection): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const stream of ["TM_PANES", "TM_LATE"])
      for (const m of await readMessages(nc, stream)) {
        expect(m.msgId, `${stream} seq ${m.seq} has a Nats-Msg-Id`).toBeDefined();
        expect(out.has(m.msgId as string), `${m.msgId} stored once`).toBe(false);
        const lines = paneBatchLines(m.body).map((l) =>
          stream === "TM_PANES" ? JSON.stringify({ ...(JSON.parse(l) as Pane), pipelineLagMs: 0 }) : l,
        );
        out.set(m.msgId as string, `${m.subject}\n${lines.join("\n")}`);
      }
    return out;
  }

  it("a run killed and restored stores the clean run's messages, the same ids with the same content", async () => {
    const clean = await server();
    const a = engine(clean.url, join(dir, "clean"));
    await a.ready;
    const summary = await runBackfill(clean.url, file);
    await waitForStatus(clean.nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "end, clean run");
    await stopGracefully(a);
    const want = await stored(clean.nc);
    // Batches, not a message per pane: some message holds several panes.
    const lines = [...want.values()].reduce((n, v) => n + v.split("\n").length - 1, 0);
    expect(lines).toBeGreaterThan(want.size);

    const crash = await server();
    const data = join(dir, "crash");
    const cpDir = join(data, "checkpoints", "engine-0-7");
    let p = engine(crash.url, data);
    await p.ready;
    const backfill = runBackfill(crash.url, file, ["--rate", "600"]);
    let replayedSomething = false;
    for (let i = 0; i < 2; i++) {
      await waitFor(() => checkpointFiles(cpDir).length > i, 60_000, `checkpoint ${i + 1} on disk`);
      await new Promise((r) => setTimeout(r, 400 + Math.floor(Math.random() * 600)));
      process.kill(p.child.pid as number, "SIGKILL");
      await p.exited;
      // What the restart resumes from, and what was stored past it: emitted again after restore.
      const newest = checkpointFiles(cpDir)[0] as string;
      const logTime = decodeCheckpoint(readFileSync(newest), newest).header.logTime ?? -Infinity;
      const emitted = (await readMessages(crash.nc, "TM_PANES")).flatMap((m) =>
        paneBatchLines(m.body).map((l) => (JSON.parse(l) as Pane).emittedAt),
      );
      if (emitted.some((t) => t > logTime)) replayedSomething = true;
      p = engine(crash.url, data);
      await p.ready;
    }
    const again = await backfill;
    await waitForStatus(crash.nc, (s) => (s.logTime ?? 0) >= again.endOfRecordingTs, 60_000, "end, crash run");
    await stopGracefully(p);
    expect(replayedSomething, "some kill left panes past the checkpoint, emitted again after the restart").toBe(true);
    const got = await stored(crash.nc);
    const missing = [...want.keys()].filter((k) => !got.has(k));
    const extra = [...got.keys()].filter((k) => !want.has(k));
    expect({ missing: missing.slice(0, 10), extra: extra.slice(0, 10) }).toEqual({ missing: [], extra: [] });
    const differing = [...want].filter(([k, v]) => got.get(k) !== v).map(([k]) => k);
    expect(differing.slice(0, 10)).toEqual([]);
  });
});

/** Checkpoint files of a worker's directory, newest first. */
function checkpointFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^checkpoint-\d+\.tmck$/.test(n))
    .sort()
    .reverse()
    .map((n) => join(dir, n));
}
