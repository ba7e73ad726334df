/**
 * `tidemark backfill` against a real nats-server: what lands in TM_EVENTS, re-runs, bad input, and
 * the order of each partition when publishes are lost on the way (docs/operations.md, "Backfill").
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startNatsProxy, startTestNats, type TestNats } from "../index.js";
import { spawnTidemark } from "../harness/processes.js";
import { connectNats, makeRecording, readMessages, runBackfill, tempDir, writeRecording } from "./engine-fixtures.js";

describe("tidemark backfill", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let dir: string;
  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    dir = tempDir("backfill");
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  const stored = async (): Promise<number> =>
    (await (await jetstreamManager(nc)).streams.info("TM_EVENTS")).state.messages;

  it("publishes every event once with heartbeats; a re-run of the same file is deduplicated", async () => {
    const events = makeRecording({ events: 2000, seed: 5 });
    const file = writeRecording(dir, events);
    const first = await runBackfill(nats.url, file, ["--batch", "100"]);
    expect(first.events).toBe(2000);
    expect(first.heartbeats).toBeGreaterThan(8);
    expect(first.duplicates).toBe(0);
    expect(await stored()).toBe(first.messages);
    const again = await runBackfill(nats.url, file, ["--batch", "100"]);
    expect(again.duplicates).toBe(again.messages);
    expect(await stored()).toBe(first.messages);
  });

  it("refuses a recording with a bad line before publishing any of it, naming the line and field", async () => {
    const before = await stored();
    const lines = makeRecording({ events: 600, seed: 6 }).map((e) => JSON.stringify(e));
    lines[449] = JSON.stringify({ ts: 1, ingest_ts: "yesterday", service: "api" });
    const file = join(dir, "bad.ndjson");
    writeFileSync(file, lines.join("\n") + "\n");
    const p = spawnTidemark(["backfill", "--input", file, "--nats", nats.url]);
    expect(await p.exited).toBe(2);
    expect(p.output()).toContain(`[TM_BACKFILL_BAD_RECORD] ${file}:450 field "ingest_ts" must be a number`);
    expect(await stored()).toBe(before);
  });

  it("keeps each partition in the recording's order when publishes are lost on the way (a dropped connection)", async () => {
    // The first send of messages 40..47 never reaches the server, as publishes written into a
    // connection that drops; the ones after them do. Stored after their successors, a re-run could
    // only add them at the end of their partitions, where the engine handles them last.
    const proxy = await startNatsProxy(nats.port);
    const lost = new Set<string>();
    proxy.toServer = (f) => {
      if (f.op !== "HPUB" || !(f.line.split(" ")[1] ?? "").startsWith("tm.events.")) return "pass";
      const id = /Nats-Msg-Id: *(\S+)/i.exec(f.payload.toString("latin1"))?.[1] ?? "";
      const n = Number(id.split("-").at(-1));
      if (n < 40 || n >= 48 || lost.has(id)) return "pass";
      lost.add(id);
      return "drop";
    };
    try {
      const file = writeRecording(dir, makeRecording({ events: 1500, seed: 8 }), "lossy.ndjson");
      const first = await runBackfill(proxy.url, file, ["--batch", "50"]).catch((err: Error) => err);
      // Whatever the first run left out, a re-run of the same file adds; the order must hold after it.
      const again = await runBackfill(nats.url, file, ["--batch", "50"]);
      expect(lost.size).toBe(8);
      const ours = (await readMessages(nc, "TM_EVENTS")).filter((m) => m.msgId?.startsWith(`bf-${again.runId}-`));
      expect(ours).toHaveLength(again.messages);
      for (let p = 0; p < 8; p++) {
        const plan = ours.filter((m) => m.subject === `tm.events.${p}`).map((m) => Number(m.msgId?.split("-").at(-1)));
        expect(plan, `partition ${p}`).toEqual([...plan].sort((x, y) => x - y));
      }
      // The lost messages were sent again within the first run: it stored everything.
      expect(first).not.toBeInstanceOf(Error);
      expect(again.duplicates).toBe(again.messages);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
