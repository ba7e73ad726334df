/**
 * Golden bytes of the core's snapshots (docs/semantics.md, "Snapshot"): a checkpoint outlives the
 * process that wrote it, so the format may change only on purpose — with a new SNAPSHOT_VERSION
 * (older ones refused with TM_SNAPSHOT_VERSION) and these pins updated in the same commit. A fixed
 * input (both partitions, late events, early, late and on-time panes, a closed reference window)
 * gives fixed bytes: pinned by length, header and SHA-256; restoring them re-encodes to themselves.
 * Version 6 still restores (snapshot-v6.test.ts).
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { capture } from "../__fixtures__/capture.js";
import { createCore, restoreCore } from "../create-core.js";
import { SNAPSHOT_VERSION } from "./snapshot.js";
import { withSessions, SESSION_SNAPSHOT_VERSION } from "../session/index.js";
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

function feed(core: StreamCore): void {
  const out = capture();
  for (let i = 0; i < 30; i++) {
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
  core.heartbeat(0, T0 + 21_500, out);
}

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
const hex = (b: Uint8Array, n: number): string => Buffer.from(b.subarray(0, n)).toString("hex");

describe("core snapshot golden bytes", () => {
  it("the window core's snapshot of the fixed input is the committed bytes", () => {
    const core = createCore(config);
    feed(core);
    const bytes = core.snapshot();
    expect(SNAPSHOT_VERSION).toBe(GOLDEN.core.version);
    expect({ length: bytes.length, head: hex(bytes, 6), sha256: sha256(bytes) }).toEqual(GOLDEN.core.bytes);
    expect(sha256(restoreCore(config, bytes).snapshot())).toBe(GOLDEN.core.bytes.sha256);
  });

  it("the core-with-sessions snapshot of the fixed input is the committed bytes", () => {
    const factory = withSessions({ gap: "5s", maxLength: "1m" });
    const core = factory.create(config);
    feed(core);
    const bytes = core.snapshot();
    expect(SESSION_SNAPSHOT_VERSION).toBe(GOLDEN.sessions.version);
    expect({ length: bytes.length, head: hex(bytes, 6), sha256: sha256(bytes) }).toEqual(GOLDEN.sessions.bytes);
    expect(sha256(factory.restore(config, bytes).snapshot())).toBe(GOLDEN.sessions.bytes.sha256);
  });
});

const GOLDEN = {
  core: {
    version: 7,
    bytes: {
      length: 5373,
      head: "544d435307b4",
      sha256: "31c4ade23035b9aa91864fcee4802ba020ee346c96c9af121b8784db2f8db05e",
    },
  },
  sessions: {
    version: 7,
    bytes: {
      length: 6806,
      head: "544d575301fd",
      sha256: "df22a1ff3ac3402a9603e0886d4277ac5d21ef440698dd166d9b92fcf6e8cf12",
    },
  },
};
