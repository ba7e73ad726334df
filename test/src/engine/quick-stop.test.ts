/**
 * An engine stopped right after it started (Ctrl-C during start-up, `tidemark up` failing on
 * another role) stops promptly: a partition consumer created after the stop was requested is
 * closed without waiting for an iteration that never comes (it used to hang for good). And a
 * stopped engine leaves nothing of itself reachable in a process that goes on (its /metrics
 * registry used to keep the core, through prom-client's process-wide GC observer).
 */
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { parseEngineConfig, startEngine } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import { tempDir } from "./engine-fixtures.js";

describe("engine stop during start-up", () => {
  let nats: TestNats | undefined;
  afterAll(async () => {
    await nats?.stop();
  });

  // A close that never resolves (the old hang) fails at the test's timeout: no stopwatch of its own.
  it("closes when stopped at once, its connections and /metrics shut", async () => {
    nats = await startTestNats();
    const config = parseEngineConfig({
      flags: { nats: nats.url, data: join(tempDir("quick-stop"), "data"), "metrics-port": "0" },
    });
    const engine = await startEngine(config);
    expect((await fetch(engine.metricsUrl)).ok).toBe(true);
    await engine.close();
    // Closed for real: its /metrics server no longer accepts a connection.
    await expect(fetch(engine.metricsUrl)).rejects.toThrow();
  });

  it("leaves its core to the collector once closed", async () => {
    nats ??= await startTestNats();
    const url = nats.url;
    const started = async (): Promise<WeakRef<object>> => {
      const config = parseEngineConfig({
        flags: { nats: url, data: join(tempDir("quick-stop-gc"), "data"), "metrics-port": "0" },
      });
      const engine = await startEngine(config);
      const core = new WeakRef<object>(engine.engine.core);
      await engine.close();
      return core;
    };
    const core = await started();
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // A WeakRef's target lives to the end of the turn that read it: collect in later turns (a
    // bounded number of them, no time waited).
    for (let i = 0; i < 20 && core.deref() !== undefined; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(core.deref()).toBeUndefined();
  });
});
