import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnTidemark } from "../index.js";

describe("tidemark up with an invalid tidemark.config.json", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-up-bad-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<[string, unknown, RegExp]> = [
    ["top level", { nats: { replicas: 2 } }, /\[TM_CONFIG_INVALID\] .*: \$\.nats\.replicas must be 1, 3 or 5/],
    [
      "a policy",
      { policies: [{ name: "fast", watermark: { kind: "arrival-lag", lag: "2 s" } }] },
      /\$\.policies\[0\]\.watermark\.lag: "2 s" is not a duration/,
    ],
    [
      "the engine section",
      { engine: { idleTimeout: "soon" } },
      /\[TM_ENGINE_BAD_CONFIG\] .*engine\.idleTimeout must be a duration/,
    ],
    ["the ingest section", { ingest: { port: "http" } }, /\[TM_INGEST_CONFIG\] .*ingest\.port/],
    [
      "an alert rule",
      {
        alerts: {
          rules: [{ alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting", window="15s"} > 0.05' }],
        },
      },
      /\[TM_CONFIG_INVALID\] .*: \$\.alerts\.rules\[0\] \("HighErrorRate"\)\.expr unknown window "15s"/,
    ],
  ];

  it.each(cases)("stops before starting anything, naming the bad field in %s", async (_what, doc, message) => {
    const file = join(dir, "tidemark.config.json");
    writeFileSync(file, JSON.stringify(doc));
    const data = join(dir, "data");
    const up = spawnTidemark(["up", "--config", file, "--data", data], { cwd: dir });
    const code = await up.exited;
    expect(code).not.toBe(0);
    expect(up.output()).toMatch(message);
    expect(up.output()).not.toContain("tidemark ready");
    expect(existsSync(join(data, "nats"))).toBe(false);
  });
});
