/**
 * TM_LATE keeps every drop (docs/decisions/0009-session-windows.md, "Live path", item 1): one event
 * can be dropped for one policy from several windows at once (a 10 s and a 60 s window, and its
 * session). The real engine runs in-process with sessions on, over a real nats-server, fed by the
 * real `tidemark backfill`; a tap between the runtime and the core counts the late records the core
 * reports. TM_LATE, deduplicated on Nats-Msg-Id, must hold exactly that many records — with
 * message ids that did not tell the records (or, batched, the input messages) apart, some would be
 * dropped as duplicates. Each TM_LATE message is a batch: one input message's records for one policy
 * (docs/decisions/0012-batched-transport.md).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { withSessions, type CoreOutput, type StreamCore } from "@tidemark/engine/core";
import type { LateRecord } from "@tidemark/engine/protocol";
import { parseEngineConfig, startEngine } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import {
  connectNats,
  makeRecording,
  readStream,
  runBackfill,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

/** The core, with every late record it reports also pushed to `seen`. */
function tapped(core: StreamCore, seen: LateRecord[]): StreamCore {
  let inner: CoreOutput | undefined;
  let outer: CoreOutput = { pane: () => undefined, late: () => undefined };
  const tap = (out: CoreOutput): CoreOutput => {
    if (out !== inner) {
      inner = out;
      outer = { pane: (p) => out.pane(p), late: (r) => (seen.push(r), out.late(r)) };
    }
    return outer;
  };
  return {
    event: (lane, e, out) => core.event(lane, e, tap(out)),
    heartbeat: (lane, ts, out) => core.heartbeat(lane, ts, tap(out)),
    finish: (out) => core.finish(tap(out)),
    status: () => core.status(),
    snapshot: () => core.snapshot(),
  };
}

describe("TM_LATE message ids", () => {
  let nats: TestNats | undefined;
  afterAll(async () => {
    await nats?.stop();
  });

  it("one event dropped from several windows of one policy is kept once per window", async () => {
    nats = await startTestNats();
    const dir = tempDir("late-ids");
    const events = makeRecording({ events: 2000, seed: 41 });
    const file = writeRecording(dir, events);
    const configFile = join(dir, "tidemark.config.json");
    const doc = { windows: ["10s", "60s"] };
    writeFileSync(configFile, JSON.stringify(doc));
    const config = parseEngineConfig({
      file: doc,
      flags: { nats: nats.url, data: join(dir, "data"), "metrics-port": "0" },
    });
    const seen: LateRecord[] = [];
    const sessions = withSessions({ gap: "20s" });
    const engine = await startEngine(config, {
      cores: {
        create: (c) => tapped(sessions.create(c), seen),
        restore: (c, b) => tapped(sessions.restore(c, b), seen),
      },
    });
    const nc = await connectNats(nats.url);
    try {
      const summary = await runBackfill(nats.url, file, ["--config", configFile]);
      await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "end of recording");
      await engine.close();

      // The test has teeth: some event is dropped for one policy from more than one window.
      const perEventPolicy = new Map<string, number>();
      for (const r of seen) {
        const k = `${JSON.stringify(r.event)}|${r.policy}`;
        perEventPolicy.set(k, (perEventPolicy.get(k) ?? 0) + 1);
      }
      expect(Math.max(...perEventPolicy.values())).toBeGreaterThan(1);
      expect(
        seen.some((r) => r.window.end - r.window.start !== 10_000 && r.window.end - r.window.start !== 60_000),
      ).toBe(true);

      const messages = (await jetstreamManager(nc).then((m) => m.streams.info("TM_LATE"))).state.messages;
      const bodies = (await readStream(nc, "TM_LATE")).map((b) => JSON.parse(b) as LateRecord);
      expect(bodies.length).toBe(seen.length);
      // Batched: fewer messages than records, one input message's records for a policy in each.
      expect(messages).toBeGreaterThan(0);
      expect(messages).toBeLessThan(seen.length);
      const key = (r: LateRecord): string => `${JSON.stringify(r.event)}|${r.policy}|${r.window.start}|${r.window.end}`;
      expect(bodies.map(key).sort()).toEqual(seen.map(key).sort());
    } finally {
      await engine.close();
      await nc.close();
    }
  });
});
