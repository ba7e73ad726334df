/**
 * Every TIDEMARK_* variable docs/operations.md documents is read by some role: set to a valid
 * value, it changes what that role's own config reader returns (the readers the roles run, not a
 * list kept beside them). A variable documented with no reader, or a reader ignoring it, fails here.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { envConfig, resolveConfig } from "@tidemark/dashboard";
import { natsConnectOptions } from "@tidemark/engine/nats";
import { parseEngineConfig, parseMergeConfig } from "@tidemark/engine/runtime";
import { loadIngestConfig } from "@tidemark/ingest";
import { describe, expect, it } from "vitest";
import { parseFlags } from "../args.js";
import { readLoadOptions } from "../load/load-options.js";
import { findConfigFile, parseTidemarkConfig } from "./tidemark-config.js";

type Env = Record<string, string>;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dir = mkdtempSync(join(tmpdir(), "tm-documented-env-"));
writeFileSync(join(dir, "other.json"), "{}");

const engine = (env: Env) => parseEngineConfig({ env });
const sessions = (env: Env) => parseEngineConfig({ env: { TIDEMARK_SESSIONS: "1", ...env } }).sessions;
const ingest = (env: Env) => loadIngestConfig({ env });
const dashboard = (env: Env) => resolveConfig(envConfig(env));
const deploy = (env: Env) => parseTidemarkConfig({}, { file: undefined, cwd: dir, env });

/** Variable → the role's reader, and a valid value that is not the default. */
const READERS: Record<string, [(env: Env) => unknown, string]> = {
  TIDEMARK_CHECKPOINT_EVERY: [engine, "7s"],
  TIDEMARK_CHECKPOINT_TIMEOUT: [engine, "2m"],
  TIDEMARK_COMPRESS_PANES: [engine, "on"],
  TIDEMARK_IDLE_TIMEOUT: [engine, "3s"],
  TIDEMARK_MAX_ALIGNMENT_BYTES: [engine, "2097152"],
  TIDEMARK_MAX_IN_FLIGHT: [engine, "7"],
  TIDEMARK_MAX_IN_FLIGHT_BYTES: [engine, "2097152"],
  TIDEMARK_MAX_QUEUED_EVENTS: [engine, "7"],
  TIDEMARK_FROM_SAVEPOINT: [engine, "savepoints/before"],
  TIDEMARK_MERGE_PARTITIONS: [(env) => parseMergeConfig({ env }).mergePartitions, "2"],
  TIDEMARK_METRICS_PORT: [engine, "9999"],
  TIDEMARK_PARTIALS: [engine, "off"],
  TIDEMARK_PARTITIONS: [engine, "0-1"],
  TIDEMARK_PARTITION_BY: [engine, "service+route"],
  TIDEMARK_PARTITION_COUNT: [ingest, "4"],
  TIDEMARK_SESSIONS: [engine, "on"],
  TIDEMARK_SESSION_GAP: [sessions, "2m"],
  TIDEMARK_SESSION_MAX_KEYS: [sessions, "70"],
  TIDEMARK_SESSION_MAX_LENGTH: [sessions, "2h"],
  TIDEMARK_WORKER: [engine, "w-1"],
  TIDEMARK_DATA: [deploy, "/srv/tidemark"],
  TIDEMARK_NATS: [engine, "nats://10.0.0.9:4222"],
  TIDEMARK_NATS_URL: [dashboard, "nats://10.0.0.9:4222"],
  TIDEMARK_NATS_USER: [(env) => natsConnectOptions("nats://a:1", env), "tm"],
  TIDEMARK_NATS_PASSWORD: [(env) => natsConnectOptions("nats://a:1", { TIDEMARK_NATS_USER: "tm", ...env }), "pw"],
  TIDEMARK_NATS_TOKEN: [(env) => natsConnectOptions("nats://a:1", env), "s3cret"],
  TIDEMARK_DEMO_RATE: [deploy, "75"],
  TIDEMARK_DEMO_CORR: [deploy, "0.75"],
  TIDEMARK_CONFIG: [(env) => findConfigFile({ cwd: dir, env }), "other.json"],
  TIDEMARK_INGEST_TOKENS: [ingest, "a-long-token"],
  TIDEMARK_INGEST_URL: [(env) => readLoadOptions(parseFlags([]), env).ingest, "http://10.0.0.9:4318"],
  TIDEMARK_DASHBOARD_HOST: [dashboard, "127.0.0.2"],
  TIDEMARK_DASHBOARD_TOKEN: [dashboard, "a-read-token"],
  TIDEMARK_DASHBOARD_HEADERS_TIMEOUT: [dashboard, "5s"],
  TIDEMARK_DASHBOARD_REQUEST_TIMEOUT: [dashboard, "20s"],
  TIDEMARK_DASHBOARD_CONNECTION_TIMEOUT: [dashboard, "10m"],
  TIDEMARK_INGEST_HEADERS_TIMEOUT: [ingest, "5s"],
  TIDEMARK_ALERTMANAGERS: [dashboard, "http://10.0.0.9:9093"],
  TIDEMARK_ALERTS_EXTERNAL_URL: [dashboard, "http://10.0.0.9:3000"],
};

/** Documented variables read by something other than a tidemark role, with the file that reads them. */
const READ_ELSEWHERE: Record<string, string> = {
  TIDEMARK_DASHBOARD_URL: "deploy/grafana/provisioning/datasources/tidemark.yaml",
};

function documented(): string[] {
  const text = readFileSync(join(ROOT, "docs", "operations.md"), "utf8");
  // Whole names only: "TIDEMARK_*" and "TIDEMARK_NATS_*" name families, not variables.
  return [...new Set([...text.matchAll(/\bTIDEMARK_[A-Z0-9_]*[A-Z0-9]\b(?!_?\*)/g)].map((m) => m[0]))].sort();
}

describe("documented TIDEMARK_* variables (docs/operations.md)", () => {
  it("are each in the table below, so none goes untested", () => {
    const known = new Set([...Object.keys(READERS), ...Object.keys(READ_ELSEWHERE)]);
    expect(documented().filter((name) => !known.has(name))).toEqual([]);
    expect(documented().length).toBeGreaterThan(30);
  });

  it.each(Object.entries(READERS))("%s changes what its role reads", (name, [read, value]) => {
    const before = JSON.stringify(read({}));
    expect(JSON.stringify(read({ [name]: value }))).not.toBe(before);
  });

  it.each(Object.entries(READ_ELSEWHERE))("%s is read by %s", (name, file) => {
    expect(readFileSync(join(ROOT, file), "utf8")).toContain(`\${${name}}`);
  });
});
