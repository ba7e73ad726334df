/**
 * The unified configuration, `tidemark.config.json` (optional): found once, validated once, and
 * handed out by section. Top-level keys:
 *
 * - `data`, `nats`, `demo`: read here (with TIDEMARK_DATA, TIDEMARK_NATS_URL, TIDEMARK_DEMO_* on top);
 * - `partitionCount`: partitions P of TM_EVENTS (TIDEMARK_PARTITION_COUNT and `up --partition-count`
 *   on top); the old key `partitions`, which now only names an engine's owned set
 *   (`engine.partitions`), is refused with the new name;
 * - `partitionBy`: "service" or "service+route", read by ingest, the engine and backfill, each
 *   validating it (docs/decisions/0032-partition-by-route.md);
 * - `mergePartitions`: merge partitions of TM_PARTIALS, read by the engine and the merge operators
 *   (docs/decisions/0033-merge-partitions.md);
 * - `policies`, `windows`, `referenceHorizon`, … : the core's settings, validated by the core's own
 *   `validateCoreConfig` (with `partitions` = the count);
 * - `ingest`, `engine`, `dashboard`: each role's section, validated by that role's config module,
 *   which also layers its TIDEMARK_* env and flags on top (see role-configs.ts);
 * - `alerts`: the alert rules and Alertmanagers, validated by the dashboard's config module (it
 *   runs them) against the file's policies and windows; `slos` likewise (docs/slo.md).
 *
 * Errors are TM_CONFIG_INVALID and name the file, the JSON path of the bad field and what is allowed.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { CORE_KEYS, coreSettingsOf } from "@tidemark/engine/config";
import { validateCoreConfig, type CoreConfig } from "@tidemark/engine/core";
import { DeployError } from "../errors.js";
import { readDemo, type DemoSettings } from "./demo-section.js";
import { Fields, type Json } from "./fields.js";
import { readNats, type NatsSettings } from "./nats-section.js";

export const CONFIG_FILE_NAME = "tidemark.config.json";

/** Keys the core's validateCoreConfig reads, defined once (`@tidemark/engine/config`). */
export { CORE_KEYS };
export const ROLE_KEYS = ["ingest", "engine", "dashboard"] as const;
/**
 * Top-level sections a role validates itself: `alerts`, the dashboard's alert rules (docs/operations.md,
 * "Alerts"); `slos`, the dashboard's SLOs (docs/slo.md); `remoteWrite`, the remote-write role's
 * (docs/remote-write.md, "Configuration").
 */
export const ROLE_OWNED_KEYS = ["alerts", "slos", "remoteWrite"] as const;
export const TOP_KEYS = [
  "$schema",
  "data",
  "partitionCount",
  "partitionBy",
  "mergePartitions",
  "nats",
  "demo",
  ...ROLE_KEYS,
  ...ROLE_OWNED_KEYS,
  ...CORE_KEYS,
] as const;

export type RoleName = (typeof ROLE_KEYS)[number];

export interface TidemarkConfig {
  /** Absolute path of the file read, or undefined when there is none. */
  readonly file: string | undefined;
  /** Absolute data directory (checkpoints, nats store, ingest token). */
  readonly data: string;
  readonly nats: NatsSettings;
  readonly demo: DemoSettings;
  readonly core: CoreConfig;
  /** The file's parsed content (empty when there is no file). */
  readonly document: Json;
  /** Each role's raw section; the role's config module validates it. */
  readonly roles: Readonly<Record<RoleName, Json | undefined>>;
}

export interface ConfigSources {
  /** `--config FILE`, when given (must exist). */
  flag?: string | undefined;
  /** `--partition-count N`, when given: wins over TIDEMARK_PARTITION_COUNT and the file. */
  partitionCount?: string | undefined;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** `--config FILE` (or TIDEMARK_CONFIG), else ./tidemark.config.json when present, else none. */
export function findConfigFile(src: ConfigSources): string | undefined {
  const cwd = src.cwd ?? process.cwd();
  const named = src.flag ?? src.env?.TIDEMARK_CONFIG;
  if (named !== undefined) {
    const path = resolve(cwd, named);
    if (!existsSync(path))
      throw new DeployError(
        "TM_CONFIG_NOT_FOUND",
        `config file ${path} does not exist: check --config / TIDEMARK_CONFIG, or leave it out to use the defaults`,
      );
    return path;
  }
  const local = resolve(cwd, CONFIG_FILE_NAME);
  return existsSync(local) ? local : undefined;
}

export function loadTidemarkConfig(src: ConfigSources = {}): TidemarkConfig {
  const file = findConfigFile(src);
  const doc = file === undefined ? {} : readJson(file);
  return parseTidemarkConfig(doc, {
    file,
    cwd: src.cwd ?? process.cwd(),
    env: src.env ?? {},
    partitionCount: src.partitionCount,
  });
}

/** Validates a parsed document (the file's content) and layers the environment on top. */
export function parseTidemarkConfig(
  doc: unknown,
  ctx: { file: string | undefined; cwd: string; env: NodeJS.ProcessEnv; partitionCount?: string | undefined },
): TidemarkConfig {
  const f = new Fields(ctx.file ?? "config");
  if (typeof doc === "object" && doc !== null && "partitions" in doc)
    throw new DeployError(
      "TM_CONFIG_INVALID",
      `${f.source}: $.partitions is now $.partitionCount (the partition count of TM_EVENTS; ` +
        `"partitions" names an engine's owned set, $.engine.partitions): rename the key`,
    );
  const root = f.object(doc, "$", TOP_KEYS);
  const nats = withNatsEnv(readNats(f, root.nats), ctx.env);
  const roles = {} as Record<RoleName, Json | undefined>;
  for (const role of ROLE_KEYS) roles[role] = f.optional(root[role], (v) => f.record(v, `$.${role}`), undefined);
  return Object.freeze({
    file: ctx.file,
    document: root,
    data: resolve(ctx.cwd, ctx.env.TIDEMARK_DATA ?? f.optional(root.data, (v) => f.string(v, "$.data"), "data")),
    nats,
    demo: withDemoEnv(readDemo(f, root.demo), ctx.env),
    core: readCore(f, root, partitionCountOf(f, root, ctx)),
    roles: Object.freeze(roles),
  });
}

/** `--partition-count`, else TIDEMARK_PARTITION_COUNT, else the file's `partitionCount` (undefined: the core's default). */
function partitionCountOf(
  f: Fields,
  root: Json,
  ctx: { env: NodeJS.ProcessEnv; partitionCount?: string | undefined },
): number | undefined {
  const given = (v: string, source: string, name: string): number =>
    new Fields(source).int(v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v, name, 1, 4096);
  if (ctx.partitionCount !== undefined) return given(ctx.partitionCount, "command line", "--partition-count");
  const env = ctx.env.TIDEMARK_PARTITION_COUNT;
  if (env !== undefined && env !== "") return given(env, "environment", "TIDEMARK_PARTITION_COUNT");
  return f.optional(root.partitionCount, (v) => f.int(v, "$.partitionCount", 1, 4096), undefined);
}

function readCore(f: Fields, root: Json, partitionCount: number | undefined): CoreConfig {
  const input: Json = {
    ...coreSettingsOf(root),
    ...(partitionCount === undefined ? {} : { partitions: partitionCount }),
  };
  try {
    return validateCoreConfig(input, "$");
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === "TM_CONFIG_INVALID") throw new DeployError("TM_CONFIG_INVALID", `${f.source}: ${e.message}`);
    throw err;
  }
}

/** TIDEMARK_NATS_URL (or TIDEMARK_NATS), TIDEMARK_NATS_USER/_PASSWORD/_TOKEN over the file's `nats`. */
function withNatsEnv(nats: NatsSettings, env: NodeJS.ProcessEnv): NatsSettings {
  const url = env.TIDEMARK_NATS_URL ?? env.TIDEMARK_NATS;
  const fromEnv = {
    ...(url === undefined ? {} : { url }),
    ...(env.TIDEMARK_NATS_USER === undefined
      ? {}
      : { user: env.TIDEMARK_NATS_USER, password: env.TIDEMARK_NATS_PASSWORD }),
    ...(env.TIDEMARK_NATS_TOKEN === undefined ? {} : { token: env.TIDEMARK_NATS_TOKEN }),
  };
  if (Object.keys(fromEnv).length === 0) return nats;
  const { port, monitorPort, replicas } = nats;
  return readNats(new Fields("environment (TIDEMARK_NATS_*)"), {
    ...stripUndefined(nats),
    ...fromEnv,
    port,
    monitorPort,
    replicas,
  });
}

function stripUndefined(o: object): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function withDemoEnv(demo: DemoSettings, env: NodeJS.ProcessEnv): DemoSettings {
  const f = new Fields("environment");
  const num = (name: string, min: number, max: number): number | undefined => {
    const v = env[name];
    if (v === undefined) return undefined;
    const n = Number(v);
    return f.number(v.trim() !== "" && Number.isFinite(n) ? n : v, name, min, max);
  };
  const rate = num("TIDEMARK_DEMO_RATE", 1, 1_000_000);
  const corr = num("TIDEMARK_DEMO_CORR", 0, 1);
  return Object.freeze({ ...demo, ...(rate === undefined ? {} : { rate }), ...(corr === undefined ? {} : { corr }) });
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new DeployError("TM_CONFIG_NOT_FOUND", `cannot read config file ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DeployError(
      "TM_CONFIG_INVALID",
      `${file} is not valid JSON (${(err as Error).message}): fix the syntax; comments and trailing commas are not allowed`,
    );
  }
}
