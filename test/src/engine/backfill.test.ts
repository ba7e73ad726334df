/** `tidemark backfill` against a real nats-server: what lands in TM_EVENTS, re-runs, bad input. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startTestNats, type TestNats } from "../index.js";
import { spawnTidemark } from "../harness/processes.js";
import { connectNats, makeRecording, runBackfill, tempDir, writeRecording } from "./engine-fixtures.js";

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
});
