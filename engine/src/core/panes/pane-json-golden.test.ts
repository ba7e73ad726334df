/**
 * Golden pane JSON (docs/semantics.md, "Latency thresholds"): with no latency thresholds
 * configured, the panes of a fixed input — every accumulation mode, early, on-time, late, final and
 * retract panes — are the bytes they were before thresholds existed (pinned by length and
 * SHA-256), and no pane value has a `latencyAbove` field.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { capture } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { defaultCoreConfig } from "../default-config.js";
import { validateCoreConfig } from "../validate-config.js";

const T0 = 1_767_225_600_000;

function panesJson(): string {
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
  return out.panes.map((p) => JSON.stringify(p)).join("\n");
}

describe("pane JSON without latency thresholds", () => {
  it("is byte-identical to the panes before thresholds existed, with no latencyAbove", () => {
    const json = panesJson();
    expect(json).not.toContain("latencyAbove");
    expect({ length: json.length, sha256: createHash("sha256").update(json).digest("hex") }).toEqual(GOLDEN);
  });
});

const GOLDEN = { length: 2_477_418, sha256: "e7105339593f6b7659bd7a5d38b924a23f559f0d6af739a3b76383dd58959900" };
