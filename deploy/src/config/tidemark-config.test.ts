import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { localIngestToken, tokenList } from "./ingest-token.js";
import { natsCredentialEnv } from "./nats-env.js";
import { findConfigFile, loadTidemarkConfig, parseTidemarkConfig } from "./tidemark-config.js";

const ctx = { file: "tidemark.config.json", cwd: "/srv/tm", env: {} };
const parse = (doc: unknown, env: NodeJS.ProcessEnv = {}) => parseTidemarkConfig(doc, { ...ctx, env });

describe("tidemark.config.json", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-config-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives the defaults for an empty document: the core's three policies, demo on, data ./data", () => {
    const c = parse({});
    expect(c.core.policies.map((p) => p.name)).toEqual(["dashboard", "alerting", "billing"]);
    expect(c.core.partitions).toBe(8);
    expect(c.data).toBe("/srv/tm/data");
    expect(c.nats.url).toBeUndefined();
    expect(c.nats.replicas).toBe(1);
    expect(c.demo).toEqual({ enabled: true, rate: 500, corr: 0.25, seed: 1 });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("reads every section and hands each role its own", () => {
    const c = parse({
      data: "/var/lib/tidemark",
      partitionCount: 4,
      nats: { url: "nats://10.0.0.1:4222,nats://10.0.0.2:4222", user: "tidemark", password: "pw", replicas: 3 },
      windows: ["10s", "1m"],
      policies: [{ name: "fast", watermark: { kind: "arrival-lag", lag: "500ms" }, mode: "accumulating" }],
      ingest: { port: 4319, tokens: ["abcdefgh1"] },
      engine: { checkpointEvery: "2s" },
      dashboard: { port: 3001 },
      demo: { rate: 50, corr: 0.5, enabled: false },
    });
    expect(c.data).toBe("/var/lib/tidemark");
    expect(c.core.partitions).toBe(4);
    expect(c.core.windows.map((w) => w.sizeMs)).toEqual([10_000, 60_000]);
    expect(c.core.policies[0]?.watermark).toEqual({ kind: "arrival-lag", lagMs: 500 });
    expect(c.nats).toMatchObject({ url: "nats://10.0.0.1:4222,nats://10.0.0.2:4222", user: "tidemark", replicas: 3 });
    expect(c.roles.ingest).toEqual({ port: 4319, tokens: ["abcdefgh1"] });
    expect(c.roles.engine).toEqual({ checkpointEvery: "2s" });
    expect(c.roles.dashboard).toEqual({ port: 3001 });
    expect(c.demo).toEqual({ enabled: false, rate: 50, corr: 0.5, seed: 1 });
  });

  it("names the JSON path of a bad field and what is allowed", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ nats: { replicas: 2 } }, /\$\.nats\.replicas must be 1, 3 or 5/],
      [{ nats: { url: "http://x" } }, /\$\.nats\.url must be a NATS URL/],
      [{ nats: { user: "u" } }, /\$\.nats\.password must be set when \$\.nats\.user is/],
      [{ nats: { port: "4222" } }, /\$\.nats\.port must be a whole number from 1 to 65535, got "4222"/],
      [{ demo: { corr: 2 } }, /\$\.demo\.corr must be a number from 0 to 1, got 2/],
      [{ demo: { rates: 5 } }, /\$\.demo\.rates must be one of the known keys \(enabled, rate, corr, seed\)/],
      [{ polices: [] }, /\$\.polices must be one of the known keys/],
      [{ ingest: [] }, /\$\.ingest must be an object/],
      [
        { policies: [{ name: "Bad Name", watermark: { kind: "arrival-lag", lag: "1s" } }] },
        /\$\.policies\[0\]\.name: expected a name of \[a-z0-9_-\]\+/,
      ],
      [{ windows: ["10 parsecs"] }, /\$\.windows\[0\]/],
      [{ partitions: 8 }, /\$\.partitions is now \$\.partitionCount/],
      [{ partitionCount: 0 }, /\$\.partitionCount must be a whole number from 1 to 4096, got 0/],
      [[], /\$ must be an object/],
    ];
    for (const [doc, message] of cases) {
      expect(() => parse(doc), JSON.stringify(doc)).toThrow(message);
      try {
        parse(doc);
      } catch (err) {
        expect((err as { code?: string }).code).toBe("TM_CONFIG_INVALID");
        expect((err as Error).message.startsWith("tidemark.config.json: ")).toBe(true);
      }
    }
  });

  it("layers TIDEMARK_* environment over the file, and names the variable when it is bad", () => {
    const c = parse(
      { data: "d", demo: { rate: 10 } },
      { TIDEMARK_DATA: "/tmp/x", TIDEMARK_NATS_URL: "nats://h:1", TIDEMARK_DEMO_RATE: "75", TIDEMARK_DEMO_CORR: "0" },
    );
    expect(c.data).toBe("/tmp/x");
    expect(c.nats.url).toBe("nats://h:1");
    expect(c.demo.rate).toBe(75);
    expect(c.demo.corr).toBe(0);
    expect(() => parse({}, { TIDEMARK_DEMO_RATE: "fast" })).toThrow(
      /environment: TIDEMARK_DEMO_RATE must be a number from 1 to 1000000, got "fast"/,
    );
  });

  it("takes the partition count from --partition-count, else TIDEMARK_PARTITION_COUNT, else partitionCount", () => {
    const env = { TIDEMARK_PARTITION_COUNT: "6" };
    expect(parse({ partitionCount: 4 }).core.partitions).toBe(4);
    expect(parse({ partitionCount: 4 }, env).core.partitions).toBe(6);
    const flagged = parseTidemarkConfig({ partitionCount: 4 }, { ...ctx, env, partitionCount: "3" });
    expect(flagged.core.partitions).toBe(3);
    expect(() => parse({}, { TIDEMARK_PARTITION_COUNT: "many" })).toThrow(
      /environment: TIDEMARK_PARTITION_COUNT must be a whole number from 1 to 4096, got "many"/,
    );
  });

  it("takes NATS credentials from TIDEMARK_NATS_* over the file, and hands them to the roles only in the environment", () => {
    const c = parse(
      { nats: { url: "nats://a:1", user: "file-user", password: "file-pw", replicas: 3 } },
      { TIDEMARK_NATS_USER: "env-user", TIDEMARK_NATS_PASSWORD: "env-pw" },
    );
    expect(c.nats).toMatchObject({ url: "nats://a:1", user: "env-user", password: "env-pw", replicas: 3 });
    expect(natsCredentialEnv(c.nats)).toEqual({ TIDEMARK_NATS_USER: "env-user", TIDEMARK_NATS_PASSWORD: "env-pw" });
    expect(natsCredentialEnv(parse({}).nats)).toEqual({});
    expect(natsCredentialEnv(parse({}, { TIDEMARK_NATS_TOKEN: "s3cret" }).nats)).toEqual({
      TIDEMARK_NATS_TOKEN: "s3cret",
    });
    expect(() => parse({}, { TIDEMARK_NATS_URL: "localhost:4222" })).toThrow(
      /environment \(TIDEMARK_NATS_\*\): \$\.nats\.url must be a NATS URL/,
    );
    expect(() => parse({}, { TIDEMARK_NATS_USER: "u" })).toThrow(
      /\$\.nats\.password must be set when \$\.nats\.user is/,
    );
  });

  it("finds --config, then ./tidemark.config.json, and says so when a named file is missing or not JSON", () => {
    expect(findConfigFile({ cwd: dir })).toBeUndefined();
    writeFileSync(join(dir, "tidemark.config.json"), JSON.stringify({ demo: { rate: 7 } }));
    expect(findConfigFile({ cwd: dir })).toBe(join(dir, "tidemark.config.json"));
    expect(loadTidemarkConfig({ cwd: dir }).demo.rate).toBe(7);
    expect(() => findConfigFile({ cwd: dir, flag: "nope.json" })).toThrow(/nope\.json does not exist/);
    writeFileSync(join(dir, "broken.json"), "{ demo: 1 ");
    expect(() => loadTidemarkConfig({ cwd: dir, flag: "broken.json" })).toThrow(/broken\.json is not valid JSON/);
  });

  it("keeps one local ingest token per data dir, private to its owner", () => {
    const a = localIngestToken(join(dir, "data"));
    const b = localIngestToken(join(dir, "data"));
    expect(a.created).toBe(true);
    expect(b).toEqual({ token: a.token, created: false });
    expect(a.token).toMatch(/^tm_[A-Za-z0-9_-]{32}$/);
    expect(statSync(join(dir, "data", "ingest-token")).mode & 0o777).toBe(0o600);
    expect(localIngestToken(join(dir, "other")).token).not.toBe(a.token);
    expect(tokenList("local-token", ["abc12345", "local-token"])).toEqual(["local-token", "abc12345"]);
  });
});
