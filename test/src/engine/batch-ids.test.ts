/**
 * Batched transport, replayed (docs/decisions/0012-batched-transport.md): every TM_PANES and TM_LATE
 * message is what the core emitted for one TM_EVENTS message on one subject, under a `Nats-Msg-Id`
 * fixed by that message's place in the log; a group still open at a checkpoint travels in it. A
 * run killed with SIGKILL while catching up, and restored from checkpoints that carry such groups,
 * emits again what it had published past the checkpoint, under the same ids with the same
 * content: after the streams' dedupe it has stored exactly the clean run's messages, id for id
 * (pipelineLagMs, the wall-clock field, aside). Real engine processes, a real nats-server.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Pane } from "@tidemark/engine/protocol";
import { decodeCheckpoint } from "@tidemark/engine/runtime";
import {
  makeRecording,
  readMessages,
  runBackfill,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
  bodyLines,
} from "./engine-fixtures.js";
import { checkpointFiles, Fleet } from "./fleet.js";

const events = makeRecording({ events: 30_000, seed: 23 });

describe("batched pane and late transport under replay", () => {
  const fleet = new Fleet();
  const dir = tempDir("batch-ids");
  const file = writeRecording(dir, events);

  afterAll(() => fleet.close());

  const server = async () => {
    const { nats, nc } = await fleet.natsServer();
    return { url: nats.url, nc };
  };

  const engine = (url: string, data: string, extra: string[] = []) => fleet.engine(url, data, extra);

  /** Message id → the message's lines with the wall-clock field zeroed, for TM_PANES and TM_LATE. */
  async function stored(nc: NatsConnection): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const stream of ["TM_PANES", "TM_LATE"])
      for (const m of await readMessages(nc, stream)) {
        expect(m.msgId, `${stream} seq ${m.seq} has a Nats-Msg-Id`).toBeDefined();
        expect(out.has(m.msgId as string), `${m.msgId} stored once`).toBe(false);
        const lines = bodyLines(m).map((l) =>
          stream === "TM_PANES" ? JSON.stringify({ ...(JSON.parse(l) as Pane), pipelineLagMs: 0 }) : l,
        );
        out.set(m.msgId as string, `${m.subject}\n${lines.join("\n")}`);
      }
    return out;
  }

  it("a run killed and restored stores the clean run's messages, the same ids with the same content", async () => {
    const clean = await server();
    const summary = await runBackfill(clean.url, file);
    const a = engine(clean.url, join(dir, "clean"));
    await a.ready;
    await waitForStatus(clean.nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 90_000, "end, clean run");
    await stopGracefully(a);
    const want = await stored(clean.nc);
    // Batches, not a message per pane: some message holds several panes.
    const lines = [...want.values()].reduce((n, v) => n + v.split("\n").length - 1, 0);
    expect(lines).toBeGreaterThan(want.size);

    // The crash run catches up on the whole log with a checkpoint after every pump slice, so
    // checkpoints fall while input messages are handled in part, their groups pending in them.
    const crash = await server();
    await runBackfill(crash.url, file);
    const data = join(dir, "crash");
    const cpDir = join(data, "checkpoints", "engine-0-7");
    const flags = ["--checkpoint-every", "1ms", "--checkpoint-min-wall", "0ms"];
    let p = engine(crash.url, data, flags);
    await p.ready;
    const restoredPending: number[] = [];
    // At least three kills; more (up to eight) until one restart resumed from a checkpoint with pending
    // groups: on a loaded machine checkpoints are sparser (20× their encoding's work apart; a few a
    // second), and a catch-up of 12,000 events was over after four, none of them with a pending group.
    // Hence 30,000 events: the catch-up lasts long enough to cut a dozen or more.
    const enough = (i: number) => i >= 3 && restoredPending.some((n) => n > 0);
    for (let i = 0; i < 8 && !enough(i) && p.child.exitCode === null; i++) {
      // Kill as soon as a new checkpoint holds a pending group (or give up on this round after 10 s).
      await freezeAtPending(p.child.pid as number, cpDir, 10_000);
      process.kill(p.child.pid as number, "SIGKILL");
      await p.exited;
      restoredPending.push(pendingIn(checkpointFiles(cpDir)[0]));
      p = engine(crash.url, data, flags);
      await p.ready;
    }
    await waitForStatus(crash.nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 90_000, "end, crash run");
    await stopGracefully(p);
    expect(
      restoredPending.some((n) => n > 0),
      `a restart resumed from a checkpoint carrying pending groups (pending per restore: ${restoredPending.join(", ")})`,
    ).toBe(true);
    const got = await stored(crash.nc);
    const missing = [...want.keys()].filter((k) => !got.has(k));
    const extra = [...got.keys()].filter((k) => !want.has(k));
    expect({ missing: missing.slice(0, 10), extra: extra.slice(0, 10) }).toEqual({ missing: [], extra: [] });
    const differing = [...want].filter(([k, v]) => got.get(k) !== v).map(([k]) => k);
    expect(differing.slice(0, 10)).toEqual([]);
  }, 180_000);
});

/**
 * Waits for a checkpoint newer than the current newest that carries pending groups, and leaves the
 * engine stopped (SIGSTOP) while that checkpoint is still its newest, so the kill that follows
 * restores it: with a checkpoint after every pump slice, the next one (likely without pending
 * groups) would otherwise often land between seeing the file and the kill. Gives up after
 * `timeoutMs` with the engine running.
 */
async function freezeAtPending(pid: number, dir: string, timeoutMs: number): Promise<void> {
  const before = checkpointFiles(dir)[0];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const newest = checkpointFiles(dir)[0];
    if (newest !== before && pendingIn(newest) > 0) {
      process.kill(pid, "SIGSTOP");
      if (checkpointFiles(dir)[0] === newest) return;
      process.kill(pid, "SIGCONT");
    }
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Groups pending in a checkpoint file (0 when there is none, or it went away while read). */
function pendingIn(file: string | undefined): number {
  if (file === undefined) return 0;
  try {
    return decodeCheckpoint(readFileSync(file), file).header.pending?.length ?? 0;
  } catch {
    return 0;
  }
}
