import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envConfig, readConfigFile, resolveConfig } from "./config.js";
import { DashboardError } from "./errors.js";

describe("dashboard config", () => {
  it("layers defaults < file < env < flags and freezes the result", () => {
    const dir = mkdtempSync(join(tmpdir(), "tm-dash-config-"));
    const file = join(dir, "tidemark.json");
    writeFileSync(
      file,
      JSON.stringify({
        nats: { url: "nats://file:4222" },
        dashboard: { port: 4000, replayMs: "30m", host: "0.0.0.0" },
      }),
    );
    const env = envConfig({
      TIDEMARK_DASHBOARD_PORT: "5000",
      TIDEMARK_DASHBOARD_ORIGINS: "http://a.test, http://b.test",
      TIDEMARK_DASHBOARD_TOKEN: "read-token-1,read-token-2",
    });
    const c = resolveConfig(readConfigFile(file), env, { port: "6000", host: undefined });
    expect(c).toMatchObject({
      port: 6000,
      host: "0.0.0.0",
      nats: "nats://file:4222",
      replayMs: 1_800_000,
      allowedOrigins: ["http://a.test", "http://b.test"],
      readTokens: ["read-token-1", "read-token-2"],
      readToken: "read-token-1",
    });
    expect(resolveConfig().replayMs).toBe(3_600_000);
    // The NATS URL and credentials the way every role takes them; TIDEMARK_NATS_URL wins over TIDEMARK_NATS.
    const nats = resolveConfig(
      envConfig({
        TIDEMARK_NATS: "nats://old:1",
        TIDEMARK_NATS_URL: "nats://a:4222,nats://b:4222",
        TIDEMARK_NATS_TOKEN: "t0k",
      }),
    );
    expect(nats).toMatchObject({ nats: "nats://a:4222,nats://b:4222", natsToken: "t0k", natsUser: null });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("reads the file's top-level slos against its own policies and windows", () => {
    const dir = mkdtempSync(join(tmpdir(), "tm-dash-config-"));
    const file = join(dir, "tidemark.json");
    const policies = [{ name: "fast", watermark: { kind: "arrival-lag", lag: "2s" }, grace: "0s" }];
    const slos = [{ name: "checkout-availability", service: "checkout", objective: 0.999, policy: "fast" }];
    writeFileSync(file, JSON.stringify({ policies, windows: [{ kind: "tumbling", size: "1m" }], slos }));
    const c = resolveConfig(readConfigFile(file));
    expect(c.slos.map((s) => [s.name, s.policy, s.paneMs, s.tiers.length])).toEqual([
      ["checkout-availability", "fast", 60_000, 4],
    ]);
    writeFileSync(file, JSON.stringify({ policies, slos: [{ ...slos[0], policy: "alerting" }] }));
    expect(() => readConfigFile(file)).toThrow(
      /\$\.slos\[0\] \("checkout-availability"\)\.policy must name one of the config's policies \(fast\)/,
    );
    expect(resolveConfig().slos).toEqual([]);
  });

  it("reads which policies of the file are in discarding mode (their session panes carry deltas)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tm-dash-config-"));
    const file = join(dir, "tidemark.json");
    const policies = [
      { name: "fast", watermark: { kind: "arrival-lag", lag: "2s" }, grace: "0s", mode: "discarding" },
      { name: "slow", watermark: { kind: "arrival-lag", lag: "10s" }, grace: "30s", mode: "retracting" },
    ];
    writeFileSync(file, JSON.stringify({ policies }));
    expect(resolveConfig(readConfigFile(file)).discardingPolicies).toEqual(["fast"]);
    expect(resolveConfig().discardingPolicies).toEqual([]);
    writeFileSync(file, JSON.stringify({ policies: [{ ...policies[0], mode: "sometimes" }] }));
    expect(() => readConfigFile(file)).toThrow(/mode.*sometimes.*session metrics/);
  });

  it("refuses to serve off loopback without a read token, as ingest does", () => {
    expect(() => resolveConfig({ host: "0.0.0.0" })).toThrow(
      'dashboard setting "readToken" (--token, TIDEMARK_DASHBOARD_TOKEN, dashboard.readToken in the config file) no read token configured but host 0.0.0.0 is not loopback: set TIDEMARK_DASHBOARD_TOKEN or TIDEMARK_DASHBOARD_TOKEN_FILE, or "readToken" in the config file\'s dashboard section',
    );
    for (const host of ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
      expect(resolveConfig({ host }).readTokens).toEqual([]);
    expect(resolveConfig({ host: "10.1.2.3", readToken: "long-enough" }).readTokens).toEqual(["long-enough"]);
  });

  it("reads read tokens from a file (one a line) besides the environment, and refuses short ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "tm-dash-config-"));
    const file = join(dir, "tokens");
    writeFileSync(file, "new-token-abc\n\nold-token-xyz\n");
    const c = resolveConfig(
      envConfig({ TIDEMARK_DASHBOARD_TOKEN_FILE: file, TIDEMARK_DASHBOARD_TOKEN: "env-token-1" }),
    );
    expect(c.readTokens).toEqual(["env-token-1", "new-token-abc", "old-token-xyz"]);
    expect(() => resolveConfig({ readTokenFile: join(dir, "missing") })).toThrow(
      /"readTokenFile" \(--token-file, TIDEMARK_DASHBOARD_TOKEN_FILE, .*\) cannot be read \(ENOENT\)/,
    );
    expect(() => resolveConfig({ readTokens: ["with space"] })).toThrow(/printable characters without spaces/);
    expect(() => resolveConfig({ tlsCertFile: "/x.pem" })).toThrow(/"tlsKeyFile" .* is missing: give both/);
  });

  it("names the field and the fix when a value is wrong", () => {
    const err = (fn: () => unknown): DashboardError => {
      try {
        fn();
      } catch (e) {
        return e as DashboardError;
      }
      throw new Error("expected an error");
    };
    expect(err(() => resolveConfig({ port: "http" }))).toMatchObject({
      code: "TM_DASHBOARD_CONFIG_INVALID",
      message:
        'dashboard setting "port" (--port, TIDEMARK_DASHBOARD_PORT, dashboard.port in the config file) must be a whole number from 0 to 65535, got "http": fix the value',
    });
    expect(err(() => resolveConfig({ replayMs: "an hour" })).message).toMatch(
      /"replayMs" \(--replay, TIDEMARK_DASHBOARD_REPLAY, .*\) must be a duration.*1h/,
    );
    expect(err(() => resolveConfig({ colour: "red" } as never)).message).toContain(
      '"colour" (dashboard.colour in the config file) is not a dashboard setting',
    );
    expect(err(() => readConfigFile("/nonexistent/tidemark.json")).code).toBe("TM_DASHBOARD_CONFIG_FILE");
    const dir = mkdtempSync(join(tmpdir(), "tm-dash-config-"));
    writeFileSync(join(dir, "c.json"), JSON.stringify({ dashboard: { natsPassword: "hunter2" } }));
    expect(err(() => readConfigFile(join(dir, "c.json"))).message).toContain("TIDEMARK_NATS_PASSWORD");
  });

  it("reads the Prometheus query limits from env and flags, and names the setting when one is wrong", () => {
    const c = resolveConfig(
      envConfig({
        TIDEMARK_DASHBOARD_QUERY_MAX_SERIES: "10",
        TIDEMARK_DASHBOARD_QUERY_MAX_SAMPLES: "20",
        TIDEMARK_DASHBOARD_QUERY_MAX_STEP_TIME: "250ms",
        TIDEMARK_DASHBOARD_QUERY_MAX_RESPONSE_BYTES: "4096",
        TIDEMARK_DASHBOARD_QUERY_TIMEOUT: "30s",
        TIDEMARK_DASHBOARD_QUERY_MAX_CONCURRENCY: "3",
        TIDEMARK_DASHBOARD_QUERY_MAX_QUEUED: "0",
      }),
      { queryMaxSeries: "11" },
    );
    expect([c.queryMaxSeries, c.queryMaxSamples, c.queryMaxStepMs, c.queryMaxResponseBytes]).toEqual([
      11, 20, 250, 4096,
    ]);
    expect([c.queryTimeoutMs, c.queryMaxConcurrency, c.queryMaxQueued]).toEqual([30_000, 3, 0]);
    const d = resolveConfig({});
    expect([d.queryMaxSeries, d.queryMaxSamples, d.queryMaxStepMs, d.queryTimeoutMs]).toEqual([
      20_000, 5_000_000, 500, 120_000,
    ]);
    expect(() => resolveConfig({ queryMaxConcurrency: "0" })).toThrow(
      /"queryMaxConcurrency" \(--query-max-concurrency, TIDEMARK_DASHBOARD_QUERY_MAX_CONCURRENCY, .*\) must be a whole number from 1/,
    );
    expect(() => resolveConfig({ queryTimeoutMs: "soon" })).toThrow(
      /"queryTimeoutMs" \(--query-timeout, .*must be a duration/,
    );
  });

  it("reads the HTTP timeouts from env and flags, each within the one that contains it", () => {
    const d = resolveConfig({});
    expect([d.headersTimeoutMs, d.requestTimeoutMs, d.connectionTimeoutMs]).toEqual([10_000, 30_000, 300_000]);
    const c = resolveConfig(
      envConfig({
        TIDEMARK_DASHBOARD_HEADERS_TIMEOUT: "2s",
        TIDEMARK_DASHBOARD_REQUEST_TIMEOUT: "5s",
        TIDEMARK_DASHBOARD_CONNECTION_TIMEOUT: "10m",
      }),
      { headersTimeoutMs: "3s" },
    );
    expect([c.headersTimeoutMs, c.requestTimeoutMs, c.connectionTimeoutMs]).toEqual([3000, 5000, 600_000]);
    expect(() => resolveConfig({ headersTimeoutMs: "40s" })).toThrow(
      /"headersTimeoutMs" \(--headers-timeout, TIDEMARK_DASHBOARD_HEADERS_TIMEOUT, .*\) \(40000 ms\) is longer than requestTimeoutMs \(30000 ms\)/,
    );
    expect(() => resolveConfig({ connectionTimeoutMs: "1m" })).toThrow(
      /"connectionTimeoutMs" \(--connection-timeout, .*is not longer than queryTimeoutMs \(120000 ms\).*raise it above queryTimeoutMs, or 0 for none/,
    );
    expect(resolveConfig({ connectionTimeoutMs: 0, requestTimeoutMs: 0, headersTimeoutMs: "1m" })).toMatchObject({
      connectionTimeoutMs: 0,
      requestTimeoutMs: 0,
      headersTimeoutMs: 60_000,
    });
  });
});
