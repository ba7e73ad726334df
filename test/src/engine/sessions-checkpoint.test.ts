/**
 * Session windows are switched per data directory (docs/decisions/0009-session-windows.md,
 * "Live path"): the real `tidemark engine --sessions` writes a checkpoint holding sessions; started
 * again on that directory without sessions it refuses with TM_CHECKPOINT_MISMATCH and says what to
 * do, with sessions it resumes. The other way round (written without, started with) is refused too.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseEngineConfig, startEngine as startInProcess } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import {
  connectNats,
  makeRecording,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

describe("sessions and checkpoints", () => {
  let nats: TestNats | undefined;
  afterAll(async () => {
    await nats?.stop();
  });

  it("a data dir written with sessions on does not restore with them off, nor the other way round", async () => {
    nats = await startTestNats();
    const dir = tempDir("sessions-checkpoint");
    const file = writeRecording(dir, makeRecording({ events: 500, seed: 5 }));
    const nc = await connectNats(nats.url);
    try {
      const withS = join(dir, "with");
      const first = startEngine(nats.url, withS, ["--sessions", "--worker", "w"]);
      await first.ready;
      const summary = await runBackfill(nats.url, file);
      await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 30_000, "end of recording");
      await stopGracefully(first);
      const off = startEngine(nats.url, withS, ["--worker", "w"]);
      expect(await off.exited).not.toBe(0);
      expect(off.output()).toMatch(
        /\[TM_CHECKPOINT_MISMATCH\] checkpoint \S+ was written with session windows on, but this engine runs with them off; start with sessions on again \(--sessions on\), or use a fresh --data directory/,
      );
      const on = startEngine(nats.url, withS, ["--worker", "w", "--sessions", "on"]);
      expect((await on.ready).engine).toMatchObject({ restoredFrom: expect.stringContaining(withS) as unknown });
      await stopGracefully(on);

      const without = join(dir, "without");
      const plain = await startInProcess(
        parseEngineConfig({ flags: { nats: nats.url, data: without, worker: "p", "metrics-port": "0" } }),
      );
      await waitForStatus(
        nc,
        (s) => s.worker === "p" && (s.logTime ?? 0) >= summary.endOfRecordingTs,
        30_000,
        "end of recording (p)",
      );
      await plain.close();
      const sessionsOn = parseEngineConfig({
        flags: { nats: nats.url, data: without, worker: "p", "metrics-port": "0", sessions: "on" },
      });
      await expect(startInProcess(sessionsOn)).rejects.toMatchObject({
        code: "TM_CHECKPOINT_MISMATCH",
        message: expect.stringMatching(
          /written with session windows off, but this engine runs with them on/,
        ) as unknown,
      });
    } finally {
      await nc.close();
    }
  });
});
