/**
 * An engine stopped right after it started (Ctrl-C during start-up, `tidemark up` failing on
 * another role) stops promptly: a partition consumer created after the stop was requested is
 * closed without waiting for an iteration that never comes (it used to hang for good).
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseEngineConfig, startEngine } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import { tempDir } from "./engine-fixtures.js";

describe("engine stop during start-up", () => {
  let nats: TestNats | undefined;
  afterAll(async () => {
    await nats?.stop();
  });

  it("closes within seconds when stopped at once", async () => {
    nats = await startTestNats();
    const config = parseEngineConfig({
      flags: { nats: nats.url, data: join(tempDir("quick-stop"), "data"), "metrics-port": "0" },
    });
    const engine = await startEngine(config);
    const t0 = Date.now();
    const closed = await Promise.race([
      engine.close().then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 10_000)),
    ]);
    expect(closed, "engine.close() still pending after 10 s").toBe(true);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
