import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envConfig, readConfigFile, resolveConfig } from "./config.js";

describe("dashboard config layers name the source of a bad value (docs/decisions/0046-layered-config.md)", () => {
  it("a variable", () => {
    expect(() => resolveConfig(envConfig({ TIDEMARK_DASHBOARD_PORT: "http" }))).toThrow(
      'dashboard setting "port" (--port, TIDEMARK_DASHBOARD_PORT, dashboard.port in the config file) from TIDEMARK_DASHBOARD_PORT must be a whole number from 0 to 65535, got "http": fix the value',
    );
    // Of two variables of one setting, the later one in precedence is named.
    expect(() => resolveConfig(envConfig({ TIDEMARK_NATS: "nats://a:1", TIDEMARK_NATS_URL: "" }))).toThrow(
      /"nats" .* from TIDEMARK_NATS_URL must be a non-empty string/,
    );
  });

  it("a file key, even while a stronger layer sets a good value; a flag's bad value without a source", () => {
    const file = join(mkdtempSync(join(tmpdir(), "tm-dash-layers-")), "tidemark.config.json");
    writeFileSync(file, JSON.stringify({ dashboard: { queryTimeoutMs: "soon" } }));
    const fromFile = `"queryTimeoutMs" (--query-timeout, TIDEMARK_DASHBOARD_QUERY_TIMEOUT, dashboard.queryTimeoutMs in the config file) from dashboard.queryTimeoutMs in ${file} must be a duration`;
    expect(() => resolveConfig(readConfigFile(file))).toThrow(fromFile);
    expect(() => resolveConfig(readConfigFile(file), { queryTimeoutMs: "30s" })).toThrow(fromFile);
    expect(() => resolveConfig({ queryTimeoutMs: "later" })).toThrow(
      /"queryTimeoutMs" \([^)]*\) must be a duration such as "500ms", "10s", "1m", "1h" or a number of milliseconds, got "later"/,
    );
    // Layers: defaults < file < env < flags.
    writeFileSync(file, JSON.stringify({ dashboard: { maxClients: 7, maxPanelsPerClient: 9 } }));
    const c = resolveConfig(readConfigFile(file), envConfig({ TIDEMARK_DASHBOARD_MAX_CLIENTS: "8" }), {
      maxPanelsPerClient: "10",
    });
    expect([c.maxClients, c.maxPanelsPerClient, c.maxClientsPerAddress]).toEqual([8, 10, 32]);
  });
});
