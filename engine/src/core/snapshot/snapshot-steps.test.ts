/**
 * A snapshot encoded in steps (docs/decisions/0016-checkpoints-without-pause.md) is the snapshot:
 * on random inputs, for the window core and for the core with sessions, driving the steps one at a
 * time — with status() read between them, as the runtime's status publisher and /metrics do —
 * gives snapshot()'s bytes exactly, in many bounded steps, and those bytes restore to a core that
 * re-encodes to them.
 */
import { describe, expect, it } from "vitest";
import { partitionOf } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore, restoreCore } from "../create-core.js";
import { defaultCoreConfig } from "../default-config.js";
import { Prng } from "../prng.js";
import { withSessions } from "../session/index.js";
import { simulate } from "../simulation.js";
import { allSteps, crc32Steps, snapshotStepsOf } from "./snapshot-steps.js";
import { crc32 } from "./byte-codec.js";
import type { CoreConfig, StreamCore } from "../types.js";
import { validateCoreConfig } from "../validate-config.js";

const PARTS = 3;
const config: CoreConfig = validateCoreConfig({
  ...defaultCoreConfig(),
  partitions: PARTS,
  windows: ["10s", "60s", { kind: "sliding", size: "30s", slide: "10s" }],
});
const sessions = withSessions({ gap: "20s" });

/** Steps driven one at a time, the status read every 16th; the bytes and the number of steps. */
function stepped(core: StreamCore): { bytes: Uint8Array; steps: number } {
  const steps = snapshotStepsOf(core);
  for (let n = 1; ; n++) {
    const r = steps.next();
    if (r.done) return { bytes: r.value, steps: n };
    if (n % 16 === 0) core.status();
  }
}

/** Random events (services, routes, users, delays from the seed), a heartbeat per partition now and then. */
function feedRandom(core: StreamCore, seed: number, events: number): void {
  const rnd = new Prng(seed);
  const out = capture();
  const input = simulate({
    seed,
    events,
    services: 2 + Math.floor(rnd.next() * 20),
    routes: 1 + Math.floor(rnd.next() * 8),
    users: 10 + Math.floor(rnd.next() * 500),
    corr: rnd.next() * 0.3,
    spanMs: 20_000 + Math.floor(rnd.next() * 60_000),
  });
  for (const e of input) {
    core.event(partitionOf(e.service, PARTS), e, out);
    if (rnd.next() < 0.01) for (let p = 0; p < PARTS; p++) core.heartbeat(p, e.ingest_ts, out);
  }
}

describe("snapshot in steps", { timeout: 120_000 }, () => {
  const cores: Array<[string, () => StreamCore, (b: Uint8Array) => StreamCore]> = [
    ["window core", () => createCore(config), (b) => restoreCore(config, b)],
    ["window core with sessions", () => sessions.create(config), (b) => sessions.restore(config, b)],
  ];
  for (const [name, create, restore] of cores)
    it(`${name}: the steps give snapshot()'s bytes on random inputs`, () => {
      for (let seed = 1; seed <= 6; seed++) {
        const core = create();
        feedRandom(core, seed * 7919, 300 + seed * 400);
        const sync = core.snapshot();
        const { bytes, steps } = stepped(core);
        expect(Buffer.from(bytes).equals(Buffer.from(sync)), `seed ${seed}`).toBe(true);
        expect(steps, `seed ${seed}: bounded steps`).toBeGreaterThan(10);
        expect(Buffer.from(restore(bytes).snapshot()).equals(Buffer.from(sync)), `seed ${seed}: restores`).toBe(true);
      }
    });

  it("a fresh core's steps give its snapshot too", () => {
    for (const [, create] of cores) {
      const core = create();
      expect(Buffer.from(stepped(core).bytes).equals(Buffer.from(core.snapshot()))).toBe(true);
    }
  });

  it("the checksum in pieces equals the checksum of the whole", () => {
    const rnd = new Prng(3);
    for (const n of [0, 1, 3, 4, 5, 262_143, 262_144, 262_145, 1_000_003]) {
      const bytes = Uint8Array.from({ length: n }, () => Math.floor(rnd.next() * 256));
      expect(allSteps(crc32Steps([bytes])), `${n} bytes`).toBe(crc32(bytes));
      const cut = Math.floor(n / 3);
      expect(allSteps(crc32Steps([bytes.subarray(0, cut), bytes.subarray(cut)])), `${n} bytes in two`).toBe(
        crc32(bytes),
      );
    }
  });

  it("a core without steps gives its snapshot() in one step", () => {
    const core = createCore(config);
    feedRandom(core, 11, 500);
    const plain: StreamCore = {
      event: (p, e, out) => core.event(p, e, out),
      heartbeat: (p, t, out) => core.heartbeat(p, t, out),
      finish: (out) => core.finish(out),
      status: () => core.status(),
      snapshot: () => core.snapshot(),
    };
    const { bytes, steps } = stepped(plain);
    expect(steps).toBe(2);
    expect(Buffer.from(bytes).equals(Buffer.from(core.snapshot()))).toBe(true);
  });
});
