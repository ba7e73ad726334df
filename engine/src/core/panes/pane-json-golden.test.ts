/**
 * Golden pane JSON (docs/semantics.md, "Latency thresholds"): with no latency thresholds
 * configured, the panes of a fixed input — every accumulation mode, early, on-time, late, final and
 * retract panes — have no `latencyAbove` field, and are pinned by length and SHA-256: `values`, the
 * panes without their measured bias and nowcast, are the bytes they were before thresholds existed;
 * `full`, the whole panes, moves only with a deliberate change of what bias a pane carries
 * (docs/semantics.md, "Measured bias": the age buckets after the window's end).
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Pane } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { defaultCoreConfig } from "../default-config.js";
import { validateCoreConfig } from "../validate-config.js";

const T0 = 1_767_225_600_000;

function panes(): Pane[] {
  const d = defaultCoreConfig();
  const config = validateCoreConfig({
    partitions: 2,
    windows: ["10s"],
    policies: [
      ...d.policies,
      {
        name: "disc",
        watermark: { kind: "arrival-lag", lag: "3s" },
        grace: "5s",
        earlyEvery: "2s",
        lateEvery: "1s",
        mode: "discarding",
      },
    ],
    referenceHorizon: "2m",
  });
  const core = createCore(config);
  const out = capture();
  for (let i = 0; i < 400; i++) {
    const late = i % 9 === 0 ? 14_000 : i % 4 === 0 ? 4_000 : 0;
    core.event(
      i % 2,
      {
        ts: T0 + i * 350 - late,
        ingest_ts: T0 + i * 350,
        service: i % 3 === 0 ? "checkout" : "search",
        route: `/r${i % 4}`,
        status: i % 6 === 0 ? 503 : 200,
        latency_ms: 20 + ((i * 37) % 500),
        user: `u${i % 11}`,
      },
      out,
    );
  }
  core.finish(out);
  return out.panes;
}

const pin = (json: string): { length: number; sha256: string } => ({
  length: json.length,
  sha256: createHash("sha256").update(json).digest("hex"),
});

describe("pane JSON without latency thresholds", () => {
  it("is byte-identical to the panes before thresholds existed, with no latencyAbove", () => {
    const ps = panes();
    const json = ps.map((p) => JSON.stringify(p)).join("\n");
    expect(json).not.toContain("latencyAbove");
    const values = ps.map(({ bias: _b, nowcast: _n, ...rest }) => JSON.stringify(rest)).join("\n");
    expect({ values: pin(values), full: pin(json) }).toEqual(GOLDEN);
  });
});

const GOLDEN = {
  values: { length: 1_101_480, sha256: "b7b97da6cf4e642d201e3a9a3125ccfed1f2521d417f58ae78fbbb11d0e9bcfd" },
  full: { length: 2_475_831, sha256: "06a88f81fb130ab33a2df867d581adce4bfaab2457720510a4b6cb912b66c651" },
};
