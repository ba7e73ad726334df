import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { validateRoles, type RoleContext } from "./role-configs.js";
import { loadTidemarkConfig, type TidemarkConfig } from "./tidemark-config.js";

const EXAMPLE = fileURLToPath(new URL("../../../tidemark.config.example.json", import.meta.url));

/** What `up` would hand the roles for `config`, two workers and one merge operator. */
function context(config: TidemarkConfig): RoleContext {
  const ports = { natsUrl: "nats://127.0.0.1:4222", ingestPort: 4318, dashboardPort: 3000 };
  return { config, ...ports, workers: 2, mergePartitions: 1 };
}

describe("tidemark.config.example.json", () => {
  it("is valid for every role, and spells out exactly the defaults", async () => {
    const config = loadTidemarkConfig({ flag: EXAMPLE, env: {} });
    await validateRoles(context(config), {});
    expect(config.core).toEqual(defaultCoreConfig());
    expect(config.demo).toMatchObject({ enabled: true, rate: 500, corr: 0.25 });
  });

  it("stops at a bad field of any role's section with that role's coded error naming the field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-example-"));
    try {
      const example = JSON.parse(readFileSync(EXAMPLE, "utf8")) as Record<string, Record<string, unknown>>;
      const cases: Array<[string, Record<string, unknown>, RegExp, string]> = [
        ["ingest", { maxAge: "forever" }, /ingest\.maxAge/, "TM_INGEST_CONFIG"],
        ["engine", { idleTimeout: "soon" }, /engine\.idleTimeout/, "TM_ENGINE_BAD_CONFIG"],
        ["dashboard", { maxWindowsPerSeries: -1 }, /maxWindowsPerSeries/, "TM_DASHBOARD_CONFIG_INVALID"],
        [
          "alerts",
          { rules: [{ alert: "Typo", expr: 'tidemark_error_ratio{policy="alertng", window="10s"} > 0.05' }] },
          /\$\.alerts\.rules\[0\] \("Typo"\)\.expr unknown policy "alertng"/,
          "TM_CONFIG_INVALID",
        ],
      ];
      for (const [section, patch, message, code] of cases) {
        const file = join(dir, `${section}.json`);
        writeFileSync(file, JSON.stringify({ ...example, [section]: { ...example[section], ...patch } }));
        const config = loadTidemarkConfig({ flag: file, env: {} });
        const run = validateRoles(context(config), {});
        await expect(run, section).rejects.toThrow(message);
        await expect(run, section).rejects.toMatchObject({ code });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
