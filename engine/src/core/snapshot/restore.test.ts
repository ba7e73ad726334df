import { describe, expect, it } from "vitest";
import { partitionOf, type TelemetryEvent } from "../../protocol.js";
import { capture, type Capture } from "../__fixtures__/capture.js";
import { createCore, restoreCore } from "../create-core.js";
import { crc32 } from "./byte-codec.js";
import { CoreError } from "../errors.js";
import { Prng } from "../prng.js";
import { simulate } from "../simulation.js";
import { SNAPSHOT_VERSION } from "./snapshot.js";
import type { CoreConfig, StreamCore } from "../types.js";
import { validateCoreConfig } from "../validate-config.js";

const PARTS = 4;
const config: CoreConfig = validateCoreConfig({
  partitions: PARTS,
  windows: ["10s", "60s", { kind: "sliding", size: "30s", slide: "10s" }],
  policies: [
    { name: "dashboard", watermark: { kind: "arrival-lag", lag: "2s" }, earlyEvery: "1s", mode: "accumulating" },
    {
      name: "alerting",
      watermark: { kind: "arrival-lag", lag: "10s" },
      grace: "30s",
      earlyEvery: "5s",
      lateEvery: "1s",
      mode: "retracting",
    },
    { name: "billing", watermark: { kind: "arrival-lag", lag: "10s" }, grace: "90s", mode: "final-only" },
    {
      name: "delta",
      watermark: { kind: "bounded", lag: "5s" },
      grace: "20s",
      earlyEvery: "3s",
      lateEvery: "2s",
      mode: "discarding",
    },
    { name: "pct", watermark: { kind: "percentile", q: 0.9, sample: 200 }, grace: "10s", mode: "accumulating" },
  ],
  referenceHorizon: "2m",
  serviceCap: 3,
  routeCapPerService: 3,
  keyTtl: "1m",
});

type Step = { kind: "event"; e: TelemetryEvent } | { kind: "beat"; p: number; t: number };

/** Events of every service plus a heartbeat on every partition each second of log time. */
function steps(): Step[] {
  const events = simulate({ seed: 5, events: 2500, services: 5, routes: 5, corr: 0.2, spanMs: 300_000 });
  const out: Step[] = [];
  let nextBeat = events[0]?.ingest_ts ?? 0;
  for (const e of events) {
    while (nextBeat <= e.ingest_ts) {
      for (let p = 0; p < PARTS; p++) out.push({ kind: "beat", p, t: nextBeat });
      nextBeat += 1000;
    }
    out.push({ kind: "event", e });
  }
  return out;
}

const STEPS = steps();

function run(core: StreamCore, from: number, to: number, out: Capture): void {
  for (let i = from; i < to; i++) {
    const s = STEPS[i] as Step;
    if (s.kind === "event") core.event(partitionOf(s.e.service, PARTS), s.e, out);
    else core.heartbeat(s.p, s.t, out);
  }
}

function straight(): string {
  const out = capture();
  const core = createCore(config);
  run(core, 0, STEPS.length, out);
  core.finish(out);
  return JSON.stringify([out.panes, out.dropped]);
}

describe("snapshot and restore", () => {
  const expected = straight();

  it("restoring midway at several random points gives byte-identical panes and late records", () => {
    const rng = new Prng(42);
    const cuts = Array.from({ length: 4 }, () => 1 + rng.int(STEPS.length - 2));
    for (const cut of cuts) {
      const out = capture();
      const first = createCore(config);
      run(first, 0, cut, out);
      const snap = first.snapshot();
      const second = restoreCore(config, snap);
      expect(second.snapshot()).toEqual(snap);
      // stateBytes estimates allocated capacity, which a decoded sketch trims: compare the rest.
      expect({ ...second.status(), stateBytes: 0 }).toEqual({ ...first.status(), stateBytes: 0 });
      run(second, cut, STEPS.length, out);
      second.finish(out);
      expect(JSON.stringify([out.panes, out.dropped])).toBe(expected);
    }
  }, 60_000);

  it("restoring twice in a row (a crash right after a restore) still gives the same output", () => {
    const out = capture();
    const a = createCore(config);
    const cut = Math.floor(STEPS.length / 3);
    run(a, 0, cut, out);
    const b = restoreCore(config, restoreCore(config, a.snapshot()).snapshot());
    run(b, cut, STEPS.length, out);
    b.finish(out);
    expect(JSON.stringify([out.panes, out.dropped])).toBe(expected);
  });

  it("rejects a corrupt, truncated, foreign-version or foreign-config snapshot with a coded error", () => {
    const core = createCore(config);
    run(core, 0, 1500, capture());
    const snap = core.snapshot();
    const flipped = snap.slice();
    flipped[Math.floor(snap.length / 2)] = (flipped[Math.floor(snap.length / 2)] as number) ^ 0x40;
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(CoreError);
        return (e as CoreError).code;
      }
      return undefined;
    };
    expect(code(() => restoreCore(config, flipped))).toBe("TM_SNAPSHOT_CORRUPT");
    expect(code(() => restoreCore(config, snap.subarray(0, snap.length - 9)))).toBe("TM_SNAPSHOT_CORRUPT");
    expect(code(() => restoreCore(config, new Uint8Array(3)))).toBe("TM_SNAPSHOT_CORRUPT");
    const version = snap.slice();
    version[4] = 99;
    expect(code(() => restoreCore(config, version))).toBe("TM_SNAPSHOT_VERSION");
    // a checkpoint of an older format (1: bias without distinct users; 2: partitions without the log time
    // of their last record; 3: one dial per policy; 4: route users at the configured precision, ADR 0015),
    // correctly sealed, is refused, not misread.
    for (const v of [1, 2, 3, 4]) {
      const old = snap.slice();
      expect(old[4]).toBe(SNAPSHOT_VERSION);
      old[4] = v;
      new DataView(old.buffer).setUint32(old.length - 4, crc32(old.subarray(0, old.length - 4)), true);
      expect(code(() => restoreCore(config, old))).toBe("TM_SNAPSHOT_VERSION");
    }
    const other = validateCoreConfig({ ...config, biasWindows: 7 });
    expect(code(() => restoreCore(other, snap))).toBe("TM_SNAPSHOT_CONFIG_MISMATCH");
  });
});
