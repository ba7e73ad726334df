/**
 * A checkpoint's snapshot does not block the event loop (docs/decisions/0016-checkpoints-without-pause.md):
 * with ~100k open (window, key) states, encoding across turns gives the synchronous snapshot's
 * bytes, in many turns, with a probe on the event loop running between them: an encoder that did
 * not slice would give the probe no turn. How long a slice blocks the loop, against the
 * synchronous snapshot measured in the same run, is a timing claim: the runtime benchmark's
 * checkpoint part measures it (engine/BENCHMARKS.md, "longest synchronous slice").
 */
import { describe, expect, it } from "vitest";
import { defaultCoreConfig } from "../../core/default-config.js";
import type { SnapshotSteps, StreamCore } from "../../core/types.js";
import { openStates } from "../../bench/open-states.js";
import { encodeAcrossTurns, SNAPSHOT_SLICE_MS } from "./snapshot-turns.js";

const config = { ...defaultCoreConfig(), partitions: 8, routeCapPerService: 200 };

/**
 * 1000 services × 100 routes, one event each, all in the first slice of every window: ~101k
 * aggregates to encode (the 10 s and 60 s windows share them, docs/decisions/0022-sliced-windows.md).
 */
const manyStates = (): StreamCore => openStates(config, 1000);

/** Turns of a setImmediate chain, until stop(): how many times the event loop ran it. */
function loopProbe(): { stop: () => number } {
  let ticks = 0;
  let on = true;
  const tick = (): void => {
    ticks++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      on = false;
      return ticks;
    },
  };
}

describe("snapshot across event-loop turns", { timeout: 120_000 }, () => {
  it("with ~100k open states, gives the synchronous bytes across many turns, the event loop running between them", async () => {
    const core = manyStates();
    expect(core.status().stateKeys).toBeGreaterThan(100_000);
    const sync = core.snapshot();
    const probe = loopProbe();
    const s = await encodeAcrossTurns(core.snapshotSteps?.() as SnapshotSteps);
    const ticks = probe.stop();
    expect(Buffer.from(s.bytes).equals(Buffer.from(sync))).toBe(true);
    const seen = `${s.turns} turns (slices of ${SNAPSHOT_SLICE_MS} ms), probe ran ${ticks} times`;
    expect(s.turns, seen).toBeGreaterThan(5);
    // The probe's chain and the encoder's alternate: a turn of the probe between every two slices.
    expect(ticks, seen).toBeGreaterThanOrEqual(s.turns - 1);
  });

  it("a step that throws rejects the encoding", async () => {
    function* failing(): SnapshotSteps {
      yield;
      throw new Error("sketch codec failed");
    }
    await expect(encodeAcrossTurns(failing())).rejects.toThrow("sketch codec failed");
  });
});
