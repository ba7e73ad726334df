/**
 * A checkpoint's snapshot does not block the event loop (docs/decisions/0016-checkpoints-without-pause.md):
 * with ~100k open (window, key) states, encoding across turns gives the synchronous snapshot's
 * bytes while a probe on the event loop never waits for more than a generous bound of work (50 ms
 * of CPU on a loaded shared machine; a slice is SNAPSHOT_SLICE_MS): the synchronous snapshot is
 * far more than that, so an encoder that did not slice would fail here.
 */
import { describe, expect, it } from "vitest";
import { defaultCoreConfig } from "../core/default-config.js";
import type { SnapshotSteps, StreamCore } from "../core/types.js";
import { openStates } from "../bench/open-states.js";
import { encodeAcrossTurns, SNAPSHOT_SLICE_MS } from "./snapshot-turns.js";

const BOUND_MS = 50;
const config = { ...defaultCoreConfig(), partitions: 8, routeCapPerService: 200 };

/**
 * 1000 services × 100 routes, one event each, all in the first slice of every window: ~101k
 * aggregates to encode (the 10 s and 60 s windows share them, docs/decisions/0022-sliced-windows.md).
 */
const manyStates = (): StreamCore => openStates(config, 1000);

/**
 * Gaps between turns of a setImmediate chain, until stop(): the one that took the most CPU time of
 * this process (user + system), with its wall time. CPU time, because on a machine shared by many
 * busy processes the wall time of a slice also counts the time the OS ran the others.
 */
function loopProbe(): { stop: () => { cpuMs: number; wallMs: number } } {
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let worst = { cpuMs: 0, wallMs: 0 };
  let on = true;
  const gap = (): void => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    if (cpuMs > worst.cpuMs) worst = { cpuMs, wallMs: now - last };
    last = now;
    lastCpu = process.cpuUsage();
  };
  const tick = (): void => {
    gap();
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      on = false;
      gap();
      return worst;
    },
  };
}

describe("snapshot across event-loop turns", { timeout: 120_000 }, () => {
  it("with ~100k open states, gives the synchronous bytes and never blocks the loop past the bound", async () => {
    const core = manyStates();
    expect(core.status().stateKeys).toBeGreaterThan(100_000);
    const t0 = performance.now();
    const sync = core.snapshot();
    const syncMs = performance.now() - t0;
    const probe = loopProbe();
    const s = await encodeAcrossTurns(core.snapshotSteps?.() as SnapshotSteps);
    const gap = probe.stop();
    expect(Buffer.from(s.bytes).equals(Buffer.from(sync))).toBe(true);
    expect(s.turns, `synchronous snapshot took ${syncMs.toFixed(0)} ms`).toBeGreaterThan(5);
    const seen = `busiest gap ${gap.cpuMs.toFixed(1)} ms of CPU in ${gap.wallMs.toFixed(1)} ms; slices of ${SNAPSHOT_SLICE_MS} ms, longest ${s.longestSliceMs.toFixed(1)} ms of wall time`;
    expect(gap.cpuMs, seen).toBeLessThan(BOUND_MS);
  });

  it("a step that throws rejects the encoding", async () => {
    function* failing(): SnapshotSteps {
      yield;
      throw new Error("sketch codec failed");
    }
    await expect(encodeAcrossTurns(failing())).rejects.toThrow("sketch codec failed");
  });
});
