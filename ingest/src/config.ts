/**
 * Ingest configuration, parsed once: defaults < the `ingest` section (and the top-level
 * `partitionCount`) of an optional JSON config file < TIDEMARK_* environment < CLI flags <
 * programmatic overrides. Validated and frozen; every error names the field and where its value
 * came from. The partition count is `partitionCount` / TIDEMARK_PARTITION_COUNT /
 * --partition-count, as for every role; `partitions` names an engine's owned set, so the old
 * spellings are refused with the new name (docs/ingest.md, "Configuration"). The top-level
 * `partitionBy` (TIDEMARK_PARTITION_BY, --partition-by) says what chooses a partition.
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { DEFAULT_PARTITIONS, type PartitionBy } from "@tidemark/engine/protocol";
import { layersOf, type ConfigSources, type SettingNames, type SettingSource } from "@tidemark/engine/config";
import { fail, FIELDS, readField } from "./config-fields.js";

export interface IngestConfig {
  readonly host: string;
  readonly port: number;
  /**
   * OTLP/gRPC port (docs/ingest.md, "OTLP/gRPC"); null: off (configured as 0). Unset with an
   * ephemeral HTTP port (port 0), it is ephemeral too (0 here), so embedded and test ingests never
   * contend for 4317.
   */
  readonly grpcPort: number | null;
  readonly natsUrl: string;
  /** Partitions P of TM_EVENTS. */
  readonly partitionCount: number;
  /** What chooses an event's partition (top-level `partitionBy`, as for the engine; docs/decisions/0032-partition-by-route.md). */
  readonly partitionBy: PartitionBy;
  /** Bearer tokens accepted on writes. Empty: writes are open (only allowed on a loopback host). */
  readonly tokens: readonly string[];
  /** Body limit after decompression, bytes. */
  readonly maxBodyBytes: number;
  readonly maxEventsPerRequest: number;
  readonly maxStringLength: number;
  readonly maxFutureSkewMs: number;
  readonly maxAgeMs: number;
  /** Request bodies held at once (read, parsed or awaiting acks) before answering 429. */
  readonly maxInFlightBytes: number;
  /** A JetStream publish not acknowledged within this answers 503. */
  readonly ackTimeoutMs: number;
  /** Seconds sent in Retry-After with 429 and 503. */
  readonly retryAfterS: number;
  readonly heartbeatMs: number;
  /** Least time between two punctuation rounds after published events; 0: none (nats/punctuation.ts). */
  readonly punctuationMs: number;
  readonly logLevel: string;
  /** A file of more bearer tokens, one a line (docs/security.md); null: none. */
  readonly tokensFile: string | null;
  /** Requests per second per token (0: no limit) and requests in flight per token (0: no limit). */
  readonly tokenRate: number;
  readonly tokenConcurrency: number;
  /** A request body that sends nothing for this long answers 408; a whole request (headers and body) longer than requestTimeoutMs is cut (408). */
  readonly bodyIdleTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** A request's headers must all arrive within this (408, connection closed); at most requestTimeoutMs. */
  readonly headersTimeoutMs: number;
  /** Idempotency keys remembered for the 409 on a reused key (docs/security.md, "Idempotency"). */
  readonly maxIdempotencyKeys: number;
  /**
   * Parsing off the event loop (docs/ingest.md, "Parsing off the event loop"): bodies of at least
   * parseOffloadBytes are parsed by parseWorkers worker threads (0: every body inline), with at
   * most maxQueuedParses waiting for one (503 past it).
   */
  readonly parseWorkers: number;
  readonly maxQueuedParses: number;
  readonly parseOffloadBytes: number;
  /** TLS certificate and key files (PEM): both or neither. */
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
}

export type IngestConfigInput = { [K in keyof IngestConfig]?: unknown };

export const INGEST_DEFAULTS: IngestConfig = Object.freeze({
  host: "127.0.0.1",
  port: 4318,
  grpcPort: 4317,
  natsUrl: "nats://127.0.0.1:4222",
  partitionCount: DEFAULT_PARTITIONS,
  partitionBy: "service",
  tokens: Object.freeze([]) as readonly string[],
  maxBodyBytes: 16 * 1024 * 1024,
  maxEventsPerRequest: 100_000,
  maxStringLength: 256,
  maxFutureSkewMs: 5 * 60_000,
  maxAgeMs: 24 * 3_600_000,
  maxInFlightBytes: 64 * 1024 * 1024,
  ackTimeoutMs: 5_000,
  retryAfterS: 1,
  heartbeatMs: 1_000,
  punctuationMs: 100,
  logLevel: "info",
  tokensFile: null,
  tokenRate: 1000,
  tokenConcurrency: 64,
  bodyIdleTimeoutMs: 10_000,
  requestTimeoutMs: 120_000,
  headersTimeoutMs: 10_000,
  maxIdempotencyKeys: 100_000,
  parseWorkers: Math.min(2, availableParallelism()),
  maxQueuedParses: 16,
  parseOffloadBytes: 256 * 1024,
  tlsCertFile: null,
  tlsKeyFile: null,
});

/** Names of each field in the config file's `ingest` section, the environment and the flags. */
const FILE_KEYS: Record<string, keyof IngestConfig> = {
  host: "host",
  port: "port",
  grpcPort: "grpcPort",
  nats: "natsUrl",
  tokens: "tokens",
  maxBodyBytes: "maxBodyBytes",
  maxEventsPerRequest: "maxEventsPerRequest",
  maxStringLength: "maxStringLength",
  maxFutureSkew: "maxFutureSkewMs",
  maxAge: "maxAgeMs",
  maxInFlightBytes: "maxInFlightBytes",
  ackTimeout: "ackTimeoutMs",
  retryAfter: "retryAfterS",
  heartbeatInterval: "heartbeatMs",
  punctuationInterval: "punctuationMs",
  logLevel: "logLevel",
  tokensFile: "tokensFile",
  tokenRate: "tokenRate",
  tokenConcurrency: "tokenConcurrency",
  bodyIdleTimeout: "bodyIdleTimeoutMs",
  requestTimeout: "requestTimeoutMs",
  headersTimeout: "headersTimeoutMs",
  maxIdempotencyKeys: "maxIdempotencyKeys",
  parseWorkers: "parseWorkers",
  maxQueuedParses: "maxQueuedParses",
  parseOffloadBytes: "parseOffloadBytes",
  tlsCert: "tlsCertFile",
  tlsKey: "tlsKeyFile",
};
const ENV_KEYS: Record<string, keyof IngestConfig> = {
  TIDEMARK_INGEST_HOST: "host",
  TIDEMARK_INGEST_PORT: "port",
  TIDEMARK_INGEST_GRPC_PORT: "grpcPort",
  TIDEMARK_NATS_URL: "natsUrl",
  TIDEMARK_PARTITION_COUNT: "partitionCount",
  TIDEMARK_PARTITION_BY: "partitionBy",
  TIDEMARK_INGEST_TOKENS: "tokens",
  TIDEMARK_LOG_LEVEL: "logLevel",
  TIDEMARK_INGEST_TOKENS_FILE: "tokensFile",
  TIDEMARK_INGEST_TOKEN_RATE: "tokenRate",
  TIDEMARK_INGEST_TOKEN_CONCURRENCY: "tokenConcurrency",
  TIDEMARK_INGEST_BODY_IDLE_TIMEOUT: "bodyIdleTimeoutMs",
  TIDEMARK_INGEST_REQUEST_TIMEOUT: "requestTimeoutMs",
  TIDEMARK_INGEST_HEADERS_TIMEOUT: "headersTimeoutMs",
  TIDEMARK_INGEST_MAX_IDEMPOTENCY_KEYS: "maxIdempotencyKeys",
  TIDEMARK_INGEST_PARSE_WORKERS: "parseWorkers",
  TIDEMARK_INGEST_MAX_QUEUED_PARSES: "maxQueuedParses",
  TIDEMARK_INGEST_PARSE_OFFLOAD_BYTES: "parseOffloadBytes",
  TIDEMARK_INGEST_TLS_CERT: "tlsCertFile",
  TIDEMARK_INGEST_TLS_KEY: "tlsKeyFile",
};
const FLAG_KEYS: Record<string, keyof IngestConfig> = {
  host: "host",
  port: "port",
  "grpc-port": "grpcPort",
  nats: "natsUrl",
  "partition-count": "partitionCount",
  "partition-by": "partitionBy",
  "log-level": "logLevel",
  "tokens-file": "tokensFile",
  "token-rate": "tokenRate",
  "token-concurrency": "tokenConcurrency",
  "body-idle-timeout": "bodyIdleTimeoutMs",
  "request-timeout": "requestTimeoutMs",
  "headers-timeout": "headersTimeoutMs",
  "max-idempotency-keys": "maxIdempotencyKeys",
  "parse-workers": "parseWorkers",
  "max-queued-parses": "maxQueuedParses",
  "parse-offload-bytes": "parseOffloadBytes",
  "tls-cert": "tlsCertFile",
  "tls-key": "tlsKeyFile",
};

export interface IngestConfigSources {
  /** CLI flag values by flag name (`port`, `host`, `nats`, `partition-count`, `log-level`, `config`). */
  flags?: Record<string, string | undefined>;
  env?: Record<string, string | undefined>;
  /** Path of a JSON config file; `flags.config` wins. */
  configFile?: string;
  overrides?: IngestConfigInput;
}

/** A field's value with where it came from, as messages name it. */
type Found = { raw: unknown; field: string; source: SettingSource; where: string };

/** Resolves, validates and freezes the configuration. Throws TM_INGEST_CONFIG naming the field. */
export function loadIngestConfig(sources: IngestConfigSources = {}): IngestConfig {
  refuseRenamed(sources);
  const path = sources.flags?.config ?? sources.configFile;
  const layers: ConfigSources = {
    file: path === undefined ? undefined : readDocument(path),
    fileName: path,
    env: sources.env,
    flags: sources.flags,
  };
  const out: Record<string, unknown> = { ...INGEST_DEFAULTS };
  const given = new Set<keyof IngestConfig>();
  for (const key of Object.keys(FIELDS) as Array<keyof IngestConfig>)
    for (const f of foundOf(key, layers, sources.overrides ?? {})) {
      given.add(key);
      out[key] = readField(key, f.raw, f.field, f.source, f.where);
    }
  if (out.port === 0 && !given.has("grpcPort")) out.grpcPort = 0;
  const config = withTokensFile(out as unknown as IngestConfig);
  if ((config.tlsCertFile === null) !== (config.tlsKeyFile === null))
    fail(config.tlsCertFile === null ? "tlsCert" : "tlsKey", "is missing: give both tlsCert and tlsKey, or neither");
  if (config.requestTimeoutMs > 0 && config.headersTimeoutMs > config.requestTimeoutMs)
    fail(
      "headersTimeout",
      `${config.headersTimeoutMs} ms is longer than requestTimeout (${config.requestTimeoutMs} ms), which includes the headers: lower it or raise requestTimeout`,
    );
  if (config.tokens.length === 0 && !isLoopback(config.host))
    fail(
      "tokens",
      `no bearer tokens configured but host ${config.host} is not loopback: set TIDEMARK_INGEST_TOKENS or "tokens" in the config file`,
    );
  return Object.freeze({ ...config, tokens: Object.freeze([...config.tokens]) });
}

/** The configured tokens and those of `tokensFile` (one a line), validated alike. */
function withTokensFile(config: IngestConfig): IngestConfig {
  if (config.tokensFile === null) return config;
  let text: string;
  try {
    text = readFileSync(config.tokensFile, "utf8");
  } catch (err) {
    fail(
      "tokensFile",
      `cannot read ${config.tokensFile} (${(err as NodeJS.ErrnoException).code ?? "error"}): give a readable file of tokens, one a line`,
    );
  }
  const source = { kind: "file", name: config.tokensFile } as const;
  const more = readField("tokens", text.split(/\r?\n/).join(","), "tokens", source, `tokens in ${config.tokensFile}`);
  return { ...config, tokens: [...new Set([...config.tokens, ...(more as string[])])] };
}

/** Shorthand for programmatic use (tests, `tidemark up`): defaults < overrides. */
export function defineIngestConfig(overrides: IngestConfigInput = {}): IngestConfig {
  return loadIngestConfig({ overrides });
}

/** The config file's document, its section checked: an object of known keys, no old key names. */
function readDocument(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    fail("--config", `cannot read config file ${path}: ${(err as Error).message}`);
  }
  const doc = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (doc.partitions !== undefined) fail(`"partitions" in ${path}`, RENAMED_KEY);
  const section = doc.ingest;
  if (section === undefined) return doc;
  if (typeof section !== "object" || section === null || Array.isArray(section))
    fail(`"ingest" in ${path}`, "must be an object");
  if ("partitions" in section) fail(`"ingest.partitions" in ${path}`, RENAMED_KEY);
  for (const k of Object.keys(section))
    if (!FILE_KEYS[k])
      fail(`"ingest.${k}" in ${path}`, `unknown key; known keys: ${Object.keys(FILE_KEYS).join(", ")}`);
  return doc;
}

const RENAMED_KEY =
  'the partition count is the top-level "partitionCount" now ("partitions" names an engine\'s owned set): rename the key';

/** The count's old flag and variable meant an engine's owned set elsewhere: refused, naming the new ones. */
function refuseRenamed(sources: IngestConfigSources): void {
  if (sources.flags?.partitions !== undefined)
    fail("flag --partitions", "the partition count is --partition-count now (--partitions is an engine's owned set)");
  if (sources.env?.TIDEMARK_PARTITIONS !== undefined)
    fail(
      "environment variable TIDEMARK_PARTITIONS",
      "ingest reads the partition count from TIDEMARK_PARTITION_COUNT now (TIDEMARK_PARTITIONS is an engine's owned set)",
    );
}

/** The names of `key` in each layer (docs/ingest.md, "Configuration"). */
function namesOf(key: keyof IngestConfig): SettingNames {
  const inSection = Object.keys(FILE_KEYS).find((k) => FILE_KEYS[k] === key);
  const file = TOP_LEVEL_KEYS.includes(key) ? key : `ingest.${inSection ?? key}`;
  return {
    field: file,
    file: TOP_LEVEL_KEYS.includes(key) || inSection !== undefined ? file : undefined,
    env: Object.keys(ENV_KEYS).filter((name) => ENV_KEYS[name] === key),
    flag: Object.keys(FLAG_KEYS).find((flag) => FLAG_KEYS[flag] === key),
  };
}

/** Every layer's value of `key`, weakest first: the file, env, flags, then programmatic overrides. */
function foundOf(key: keyof IngestConfig, layers: ConfigSources, overrides: IngestConfigInput): Found[] {
  const names = namesOf(key);
  const found: Found[] = layersOf(names, layers, { blankEnvIsUnset: false }).map((s) => ({
    raw: s.value,
    field: names.field,
    source: s.source,
    where:
      s.source.kind === "file"
        ? `"${names.file}" in ${layers.fileName}`
        : `${names.field} from ${s.source.kind === "env" ? "environment variable" : "flag"} ${s.source.name}`,
  }));
  if (overrides[key] !== undefined)
    found.push({ raw: overrides[key], field: key, source: { kind: "option", name: key }, where: `option ${key}` });
  return found;
}

/** Settings read from the top level of the file (shared with the other roles), not the `ingest` section. */
const TOP_LEVEL_KEYS: ReadonlyArray<keyof IngestConfig> = ["partitionCount", "partitionBy"];

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));
}
