import { mkdtempSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INGEST_DEFAULTS, loadIngestConfig } from "./config.js";
import { IngestError } from "./errors.js";

function configFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "tm-ingest-config-")), "tidemark.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function errorOf(fn: () => unknown): IngestError {
  try {
    fn();
  } catch (err) {
    if (err instanceof IngestError) return err;
    throw err;
  }
  throw new Error("expected an IngestError");
}

describe("ingest config", () => {
  it("layers defaults < config file < env < flags, parses durations and token lists, and freezes", () => {
    const file = configFile({
      partitionCount: 4,
      ingest: { port: 5000, maxAge: "1h", tokens: ["file-token-1"], host: "127.0.0.2" },
      engine: { ignored: true },
    });
    const c = loadIngestConfig({
      flags: { config: file, port: "6000" },
      env: {
        TIDEMARK_PARTITION_COUNT: "16",
        TIDEMARK_INGEST_TOKENS: "env-token-1, env-token-2",
        TIDEMARK_NATS_URL: "nats://10.0.0.1:4222",
      },
    });
    expect(c.port).toBe(6000);
    expect(c.partitionCount).toBe(16);
    expect(loadIngestConfig({ configFile: file }).partitionCount).toBe(4);
    expect(loadIngestConfig({ configFile: file, flags: { "partition-count": "3" } }).partitionCount).toBe(3);
    expect(c.maxAgeMs).toBe(3_600_000);
    expect(c.host).toBe("127.0.0.2");
    expect(c.tokens).toEqual(["env-token-1", "env-token-2"]);
    expect(c.natsUrl).toBe("nats://10.0.0.1:4222");
    expect(c.maxBodyBytes).toBe(INGEST_DEFAULTS.maxBodyBytes);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.tokens)).toBe(true);
  });

  it("names the field and its source in every error", () => {
    expect(errorOf(() => loadIngestConfig({ flags: { port: "70000" } })).message).toMatch(
      /flag --port.*0 to 65535.*"70000"/,
    );
    expect(errorOf(() => loadIngestConfig({ env: { TIDEMARK_PARTITION_COUNT: "zero" } })).message).toMatch(
      /environment variable TIDEMARK_PARTITION_COUNT/,
    );
    expect(errorOf(() => loadIngestConfig({ env: { TIDEMARK_INGEST_TOKENS: "short" } })).message).toMatch(
      /TIDEMARK_INGEST_TOKENS.*at least 8/,
    );
    const file = configFile({ ingest: { maxAge: "forever" } });
    expect(errorOf(() => loadIngestConfig({ configFile: file })).message).toMatch(/"ingest.maxAge" in .*duration/);
    const unknown = configFile({ ingest: { prot: 1 } });
    expect(errorOf(() => loadIngestConfig({ configFile: unknown })).message).toMatch(/"ingest.prot".*unknown key/);
    expect(errorOf(() => loadIngestConfig({ configFile: configFile("{nope") })).code).toBe("TM_INGEST_CONFIG");
  });

  it("refuses the partition count's old names (they mean an engine's owned set), naming the new ones", () => {
    expect(errorOf(() => loadIngestConfig({ flags: { partitions: "8" } })).message).toMatch(
      /flag --partitions: .*--partition-count/,
    );
    expect(errorOf(() => loadIngestConfig({ env: { TIDEMARK_PARTITIONS: "8" } })).message).toMatch(
      /TIDEMARK_PARTITIONS: .*TIDEMARK_PARTITION_COUNT/,
    );
    const top = configFile({ partitions: 8 });
    expect(errorOf(() => loadIngestConfig({ configFile: top })).message).toMatch(/"partitions" in .*"partitionCount"/);
    const section = configFile({ ingest: { partitions: 8 } });
    expect(errorOf(() => loadIngestConfig({ configFile: section })).message).toMatch(
      /"ingest.partitions" in .*"partitionCount"/,
    );
  });

  it("accepts a comma list of NATS servers and refuses anything else", () => {
    expect(loadIngestConfig({ flags: { nats: "nats://10.0.0.1:4222, nats://10.0.0.2:4222" } }).natsUrl).toBe(
      "nats://10.0.0.1:4222, nats://10.0.0.2:4222",
    );
    expect(errorOf(() => loadIngestConfig({ flags: { nats: "http://10.0.0.1:4222" } })).message).toMatch(
      /flag --nats.*NATS URL/,
    );
    expect(errorOf(() => loadIngestConfig({ flags: { nats: "nats://a:1,," } })).message).toMatch(/flag --nats/);
  });

  it("refuses open writes on a non-loopback host", () => {
    expect(errorOf(() => loadIngestConfig({ flags: { host: "0.0.0.0" } })).message).toMatch(
      /tokens.*TIDEMARK_INGEST_TOKENS/,
    );
    expect(loadIngestConfig({ flags: { host: "0.0.0.0" }, env: { TIDEMARK_INGEST_TOKENS: "a-long-token" } }).host).toBe(
      "0.0.0.0",
    );
  });

  it("reads partitionBy from the file's top level, env or flag, naming the field when it is neither value", () => {
    expect(loadIngestConfig({}).partitionBy).toBe("service");
    expect(loadIngestConfig({ configFile: configFile({ partitionBy: "service+route" }) }).partitionBy).toBe(
      "service+route",
    );
    expect(loadIngestConfig({ env: { TIDEMARK_PARTITION_BY: "service+route" } }).partitionBy).toBe("service+route");
    expect(errorOf(() => loadIngestConfig({ flags: { "partition-by": "route" } })).message).toMatch(
      /flag --partition-by.*"service" or "service\+route"/,
    );
  });

  it("reads tokens from a file beside the environment, and the limits, timeouts and TLS files by every name", () => {
    const dir = mkdtempSync(join(tmpdir(), "tm-ingest-config-"));
    const tokens = join(dir, "tokens");
    writeFileSync(tokens, "file-token-aaaa\n\nfile-token-bbbb\n");
    const c = loadIngestConfig({
      env: {
        TIDEMARK_INGEST_TOKENS: "env-token-1111",
        TIDEMARK_INGEST_TOKENS_FILE: tokens,
        TIDEMARK_INGEST_TOKEN_RATE: "50",
        TIDEMARK_INGEST_BODY_IDLE_TIMEOUT: "2s",
      },
      flags: { "token-concurrency": "4", "request-timeout": "30s", host: "0.0.0.0" },
      configFile: configFile({ ingest: { maxIdempotencyKeys: 10 } }),
    });
    expect(c.tokens).toEqual(["env-token-1111", "file-token-aaaa", "file-token-bbbb"]);
    expect(c).toMatchObject({ tokenRate: 50, tokenConcurrency: 4, bodyIdleTimeoutMs: 2000, requestTimeoutMs: 30_000 });
    expect(c.maxIdempotencyKeys).toBe(10);
    expect(errorOf(() => loadIngestConfig({ env: { TIDEMARK_INGEST_TOKENS_FILE: join(dir, "none") } })).message).toBe(
      `config tokensFile: cannot read ${join(dir, "none")} (ENOENT): give a readable file of tokens, one a line`,
    );
    expect(errorOf(() => loadIngestConfig({ flags: { "tls-cert": "/c.pem" } })).message).toBe(
      "config tlsKey: is missing: give both tlsCert and tlsKey, or neither",
    );
    expect(errorOf(() => loadIngestConfig({ flags: { "token-rate": "fast" } })).message).toContain(
      "flag --token-rate: must be a whole number from 0 to 10000000",
    );
  });

  it("reads headersTimeout by every name, and refuses one longer than requestTimeout", () => {
    expect(loadIngestConfig({}).headersTimeoutMs).toBe(10_000);
    expect(loadIngestConfig({ env: { TIDEMARK_INGEST_HEADERS_TIMEOUT: "3s" } }).headersTimeoutMs).toBe(3000);
    expect(loadIngestConfig({ flags: { "headers-timeout": "2s" } }).headersTimeoutMs).toBe(2000);
    expect(loadIngestConfig({ configFile: configFile({ ingest: { headersTimeout: "1s" } }) }).headersTimeoutMs).toBe(
      1000,
    );
    expect(
      errorOf(() => loadIngestConfig({ flags: { "headers-timeout": "20s", "request-timeout": "10s" } })).message,
    ).toBe(
      "config headersTimeout: 20000 ms is longer than requestTimeout (10000 ms), which includes the headers: lower it or raise requestTimeout",
    );
    // requestTimeout 0 (none) leaves headersTimeout free.
    expect(loadIngestConfig({ flags: { "headers-timeout": "20s", "request-timeout": "0" } }).headersTimeoutMs).toBe(
      20_000,
    );
  });

  it("reads the parse pool's settings by every name: workers (min(2, cores)), queue and threshold", () => {
    const d = loadIngestConfig({});
    expect([d.parseWorkers, d.maxQueuedParses, d.parseOffloadBytes]).toEqual([
      Math.min(2, availableParallelism()),
      16,
      256 * 1024,
    ]);
    const c = loadIngestConfig({
      env: { TIDEMARK_INGEST_PARSE_WORKERS: "0", TIDEMARK_INGEST_MAX_QUEUED_PARSES: "3" },
      flags: { "parse-offload-bytes": "1048576" },
    });
    expect([c.parseWorkers, c.maxQueuedParses, c.parseOffloadBytes]).toEqual([0, 3, 1_048_576]);
    expect(loadIngestConfig({ configFile: configFile({ ingest: { parseWorkers: 4 } }) }).parseWorkers).toBe(4);
    expect(errorOf(() => loadIngestConfig({ flags: { "parse-workers": "-1" } })).message).toContain(
      "flag --parse-workers: must be a whole number from 0 to 64",
    );
  });

  it("grpcPort: 4317 by default, 0 turns it off, and follows an ephemeral HTTP port unless given", () => {
    expect(loadIngestConfig({}).grpcPort).toBe(4317);
    expect(loadIngestConfig({ flags: { "grpc-port": "0" } }).grpcPort).toBeNull();
    expect(loadIngestConfig({ env: { TIDEMARK_INGEST_GRPC_PORT: "5317" } }).grpcPort).toBe(5317);
    expect(loadIngestConfig({ flags: { port: "0" } }).grpcPort).toBe(0);
    expect(loadIngestConfig({ flags: { port: "0", "grpc-port": "4400" } }).grpcPort).toBe(4400);
    expect(loadIngestConfig({ flags: { port: "0", "grpc-port": "0" } }).grpcPort).toBeNull();
    expect(() => loadIngestConfig({ flags: { "grpc-port": "70000" } })).toThrow(/--grpc-port: must be a whole number/);
  });
});
