/**
 * The state size in `status()` is measured per slice and kept until the slice takes another event
 * (core-status.ts): on random streams, with status read at random points, restored in the middle,
 * it equals a full walk of every slice, key and aggregate.
 */
import { describe, expect, it } from "vitest";
import type { CoreState } from "./core-state.js";
import { createCore, restoreCore } from "./create-core.js";
import { defaultCoreConfig } from "./default-config.js";
import { Prng } from "./prng.js";
import type { EventTimeCore } from "./stream-core.js";
import type { CoreConfig, StreamCore } from "./types.js";

const T = 1_767_225_600_000;

/** The walk `status()` did before: every slice, key and aggregate. */
function walk(state: CoreState): { openWindows: number; stateKeys: number; stateBytes: number } {
  let openWindows = 0;
  let stateKeys = 0;
  let stateBytes = 0;
  for (const c of state.windowConfigs) {
    openWindows += c.windows.size;
    for (const slice of c.slices.values())
      for (const node of slice.services.values()) {
        stateKeys += 1 + (node.routes?.size ?? 0);
        stateBytes += node.agg.heapBytes();
        for (const r of node.routes?.values() ?? []) stateBytes += r.agg.heapBytes();
      }
  }
  return { openWindows, stateKeys, stateBytes };
}

function expectWalk(core: StreamCore): void {
  const s = core.status();
  const w = walk((core as EventTimeCore).state);
  expect({ openWindows: s.openWindows, stateKeys: s.stateKeys, stateBytes: s.stateBytes }).toEqual(w);
}

function run(seed: number, config: CoreConfig): number {
  const rnd = new Prng(seed);
  const out = { pane: () => undefined, late: () => undefined };
  let core = createCore(config);
  let t = T;
  let checks = 0;
  for (let i = 0; i < 6000; i++) {
    t += Math.floor(rnd.next() * 40);
    const p = Math.floor(rnd.next() * config.partitions);
    if (rnd.next() < 0.02) core.heartbeat(p, t, out);
    else {
      const delay = rnd.next() < 0.1 ? Math.floor(rnd.next() * 90_000) : Math.floor(rnd.next() * 2000);
      const n = Math.floor(rnd.next() * 1000);
      core.event(
        p,
        {
          ts: t - delay,
          ingest_ts: t,
          service: `svc-${n % 7}`,
          route: `/r/${n % 23}`,
          status: n % 13 ? 200 : 503,
          latency_ms: 1 + Math.floor(rnd.next() * 900),
          user: `u${Math.floor(rnd.next() * 400)}`,
        },
        out,
      );
    }
    if (rnd.next() < 0.03) {
      expectWalk(core);
      checks++;
    }
    if (rnd.next() < 0.0005) core = restoreCore(config, core.snapshot());
  }
  expectWalk(core);
  return checks + 1;
}

describe("status() state size", () => {
  it("equals a full walk of the state on random streams, status read at random points", () => {
    const config = { ...defaultCoreConfig(), partitions: 3 };
    let checks = 0;
    for (let seed = 1; seed <= 8; seed++) checks += run(seed, config);
    expect(checks).toBeGreaterThan(8 * 100);
  });

  it("does not walk a slice again until it takes an event", () => {
    const config = { ...defaultCoreConfig(), partitions: 1 };
    const core = createCore(config);
    const out = { pane: () => undefined, late: () => undefined };
    const e = { ts: T, ingest_ts: T, service: "a", route: "/x", status: 200, latency_ms: 5, user: "u" };
    core.event(0, e, out);
    const first = core.status();
    const state = (core as EventTimeCore).state;
    const slice = [...(state.windowConfigs[0]?.slices.values() ?? [])][0];
    const node = slice?.services.get("a");
    expect(node).toBeDefined();
    let calls = 0;
    const heapBytes = node!.agg.heapBytes.bind(node!.agg);
    node!.agg.heapBytes = () => (calls++, heapBytes());
    expect(core.status().stateBytes).toBe(first.stateBytes);
    expect(calls).toBe(0);
    core.event(0, { ...e, latency_ms: 700, user: "v" }, out);
    expect(core.status().stateBytes).toBe(walk(state).stateBytes);
    expect(calls).toBeGreaterThan(0);
  });
});
