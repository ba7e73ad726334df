/**
 * Version-6 snapshots still restore (docs/semantics.md, "Snapshot"): the fixtures are a core and
 * a core-with-sessions snapshot written by the version-6 code (before the after-end age buckets)
 * of the golden test's input, 120 events in. Restored and fed the next 80 events, they emit the
 * same panes as a core that never stopped, value for value; on-time, late and final panes carry
 * the same bias too (their stages' figures are kept); only early panes' figures after the window's
 * end ("1+", which pooled different ages) are dropped and measured again.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Pane } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore, restoreCore } from "../create-core.js";
import { withSessions } from "../session/index.js";
import type { StreamCore } from "../types.js";
import { validateCoreConfig } from "../validate-config.js";

const config = validateCoreConfig({
  partitions: 2,
  windows: ["10s"],
  policies: [
    {
      name: "p",
      label: "p",
      watermark: { kind: "arrival-lag", lag: "2s" },
      grace: "5s",
      earlyEvery: "1s",
      lateEvery: "1s",
      mode: "retracting",
    },
  ],
  referenceHorizon: "30s",
  biasWindows: 3,
  relativeAccuracy: 0.02,
  hllPrecision: 4,
});
const T0 = 1_767_225_600_000;
const CUT = 120;
const END = 200;

function feed(core: StreamCore, from: number, to: number): Pane[] {
  const out = capture();
  for (let i = from; i < to; i++) {
    const late = i % 7 === 0 ? 9000 : 0;
    core.event(
      i % 2,
      {
        ts: T0 + i * 700 - late,
        ingest_ts: T0 + i * 700,
        service: i % 2 ? "a" : "b/c",
        route: `/r${i % 3}`,
        status: i % 5 === 0 ? 503 : 200,
        latency_ms: 3 + i,
        user: `u${i % 4}`,
      },
      out,
    );
  }
  core.finish(out);
  return out.panes;
}

const fixture = (name: string): Uint8Array =>
  new Uint8Array(Buffer.from(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8"), "base64"));

function expectContinues(restored: StreamCore, fresh: StreamCore): void {
  const want = feed(fresh, 0, END).filter((p) => p.emittedAt >= T0 + CUT * 700);
  const got = feed(restored, CUT, END);
  expect(got.length).toBe(want.length);
  const valueOf = ({ bias: _b, nowcast: _n, ...rest }: Pane): string => JSON.stringify(rest);
  expect(got.map(valueOf)).toEqual(want.map(valueOf));
  const settled = (ps: Pane[]): string[] =>
    ps.filter((p) => p.kind !== "early" && p.kind !== "retract").map((p) => JSON.stringify(p));
  expect(settled(got).length).toBeGreaterThan(10);
  expect(settled(got)).toEqual(settled(want));
  // The early panes after the window's end carry today's buckets, none the old pooled "1+".
  const after = got.filter((p) => p.kind === "early" && p.emittedAt >= p.window.end);
  expect(after.length).toBeGreaterThan(0);
  expect(after.filter((p) => !["1+0", "1+1", "1+2", "1+3+"].includes(p.bias.age as string))).toEqual([]);
}

describe("version-6 snapshots", () => {
  it("a window core's restores and continues as a core that never stopped", () => {
    expectContinues(restoreCore(config, fixture("core-v6.b64")), createCore(config));
  });

  it("a core-with-sessions' restores and continues alike", () => {
    const factory = withSessions({ gap: "5s", maxLength: "1m" });
    expectContinues(factory.restore(config, fixture("sessions-v6.b64")), factory.create(config));
  });
});
