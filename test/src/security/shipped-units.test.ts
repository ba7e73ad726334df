/**
 * The shipped systemd units and env example are not open (docs/security.md): the dashboard unit
 * binds 0.0.0.0, and with the env example it has a read token; without one it refuses to start.
 * Read from deploy/systemd/ and parsed by the roles' own config modules.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envConfig, resolveConfig } from "@tidemark/dashboard";
import { loadIngestConfig } from "@tidemark/ingest";

const SYSTEMD = fileURLToPath(new URL("../../../deploy/systemd/", import.meta.url));

/** KEY=VALUE lines of an EnvironmentFile (comments and blanks skipped). */
function envFile(name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(SYSTEMD + name, "utf8").split("\n")) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1] as string] = m[2] as string;
  }
  return out;
}

/** The flags of a unit's ExecStart after the role name. */
function unitFlags(unit: string, role: string): Record<string, string> {
  const exec = /^ExecStart=(.*)$/m.exec(readFileSync(SYSTEMD + unit, "utf8"))?.[1] ?? "";
  const args = exec.split(/\s+/);
  const after = args.slice(args.indexOf(role) + 1);
  const flags: Record<string, string> = {};
  for (let i = 0; i + 1 < after.length; i += 2) flags[(after[i] as string).replace(/^--/, "")] = after[i + 1] as string;
  return flags;
}

describe("the shipped systemd units", () => {
  const env = envFile("tidemark.env.example");

  it("run the dashboard off loopback only with the env example's read token", () => {
    const flags = unitFlags("tidemark-dashboard.service", "dashboard");
    expect(flags.host).toBe("0.0.0.0");
    const config = resolveConfig(envConfig(env), { host: flags.host, port: flags.port });
    expect(config.readTokens.length).toBeGreaterThan(0);
    expect(() =>
      resolveConfig(envConfig({ ...env, TIDEMARK_DASHBOARD_TOKEN: undefined }), { host: flags.host }),
    ).toThrow(/no read token configured but host 0\.0\.0\.0 is not loopback/);
  });

  it("run ingest off loopback only with the env example's tokens", () => {
    const flags = unitFlags("tidemark-ingest.service", "ingest");
    expect(flags.host).toBe("0.0.0.0");
    expect(loadIngestConfig({ env, flags: { host: flags.host, port: flags.port } }).tokens.length).toBeGreaterThan(0);
  });
});
