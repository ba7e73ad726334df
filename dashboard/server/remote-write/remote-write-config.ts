/**
 * The remote-write role's configuration (docs/remote-write.md, "Configuration"): defaults < the
 * config file's `remoteWrite` section < TIDEMARK_REMOTE_WRITE_* env < flags; parsed once,
 * validated, frozen, with the shared field readers (`@tidemark/engine/config`,
 * docs/decisions/0046-layered-config.md). Errors are TM_CONFIG_INVALID naming the field and what it takes.
 */
import { ConfigFieldError, duration as durationOf, integer, text, type FieldReader } from "@tidemark/engine/config";
import type { PolicyConfig } from "@tidemark/engine/core";
import { DashboardError } from "../errors.js";

export interface RemoteWriteConfig {
  /** The receiver's remote-write endpoint, e.g. http://prometheus:9090/api/v1/write. */
  readonly url: string;
  /** NATS server URL (or a comma list of one cluster's servers). */
  readonly nats: string;
  /** Durable consumer on TM_PANES: where the role resumes. One per receiver. */
  readonly consumer: string;
  /** Directory of the newest-sample snapshot (`<dataDir>/remote-write/<consumer>.json`). */
  readonly dataDir: string;
  /** Samples per request at most. */
  readonly batchSize: number;
  /** Samples queued before the role stops reading TM_PANES until some are written. */
  readonly queueCapacity: number;
  /** Series whose newest sample is remembered (ordering across restarts); past it the oldest go. */
  readonly maxSeries: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** One request's timeout. */
  readonly timeoutMs: number;
  /** JetStream redelivers a message not acknowledged within this (the role then keeps the newest delivery). */
  readonly ackWaitMs: number;
  readonly host: string;
  /** /metrics port; 0: any free port (the ready line names it). */
  readonly metricsPort: number;
  /** Sent as `Authorization: Bearer …` (env TIDEMARK_REMOTE_WRITE_TOKEN only: secrets travel in the environment). */
  readonly bearerToken: string | null;
  /** The policies, as the engine reads them: which pane settles a window (docs/decisions/0039-remote-write.md). */
  readonly policies: readonly Pick<PolicyConfig, "name" | "graceMs" | "mode">[];
  readonly logLevel: string;
}

type Key = Exclude<keyof RemoteWriteConfig, "policies" | "dataDir" | "nats">;
export type RemoteWriteInput = Partial<Record<Key, unknown>>;

/** Keys of the file's `remoteWrite` section. */
export const REMOTE_WRITE_FILE_KEYS = [
  "url",
  "consumer",
  "batchSize",
  "queueCapacity",
  "maxSeries",
  "minBackoff",
  "maxBackoff",
  "timeout",
  "ackWait",
  "host",
  "metricsPort",
] as const;

const DEFAULTS = {
  consumer: "tidemark-remote-write",
  batchSize: 2000,
  queueCapacity: 100_000,
  maxSeries: 1_000_000,
  minBackoffMs: 30,
  maxBackoffMs: 5000,
  timeoutMs: 30_000,
  ackWaitMs: 300_000,
  host: "127.0.0.1",
  metricsPort: 0,
  bearerToken: null,
  logLevel: "info",
};

const ENV: Record<string, Key> = {
  TIDEMARK_REMOTE_WRITE_URL: "url",
  TIDEMARK_REMOTE_WRITE_CONSUMER: "consumer",
  TIDEMARK_REMOTE_WRITE_TOKEN: "bearerToken",
  TIDEMARK_REMOTE_WRITE_METRICS_PORT: "metricsPort",
  TIDEMARK_LOG_LEVEL: "logLevel",
};

/** Flags of `tidemark remote-write`, by setting. */
export const REMOTE_WRITE_FLAGS: Record<string, Key> = {
  url: "url",
  consumer: "consumer",
  "batch-size": "batchSize",
  "queue-capacity": "queueCapacity",
  "max-series": "maxSeries",
  "min-backoff": "minBackoffMs",
  "max-backoff": "maxBackoffMs",
  timeout: "timeoutMs",
  "ack-wait": "ackWaitMs",
  host: "host",
  "metrics-port": "metricsPort",
};

/** The file's `remoteWrite` section as a layer (durations under their file names). */
export function fileLayer(section: unknown, source: string): RemoteWriteInput {
  if (section === undefined) return {};
  if (typeof section !== "object" || section === null || Array.isArray(section))
    bad(`${source}: $.remoteWrite`, "an object", section);
  const s = section as Record<string, unknown>;
  for (const k of Object.keys(s))
    if (!(REMOTE_WRITE_FILE_KEYS as readonly string[]).includes(k))
      bad(`${source}: $.remoteWrite.${k}`, `one of the known keys (${REMOTE_WRITE_FILE_KEYS.join(", ")})`, k);
  const { minBackoff, maxBackoff, timeout, ackWait, ...rest } = s;
  return { ...rest, minBackoffMs: minBackoff, maxBackoffMs: maxBackoff, timeoutMs: timeout, ackWaitMs: ackWait };
}

export function envLayer(env: NodeJS.ProcessEnv): RemoteWriteInput {
  const out: RemoteWriteInput = {};
  for (const [name, key] of Object.entries(ENV)) if (env[name] !== undefined && env[name] !== "") out[key] = env[name];
  return out;
}

export function flagLayer(get: (flag: string) => string | undefined): RemoteWriteInput {
  const out: RemoteWriteInput = {};
  for (const [flag, key] of Object.entries(REMOTE_WRITE_FLAGS)) if (get(flag) !== undefined) out[key] = get(flag);
  return out;
}

/** defaults < layers (in order); `base` carries what the unified config already resolved. */
export function resolveRemoteWriteConfig(
  base: Pick<RemoteWriteConfig, "nats" | "dataDir" | "policies">,
  ...layers: RemoteWriteInput[]
): RemoteWriteConfig {
  const m: Record<string, unknown> = { ...DEFAULTS };
  for (const layer of layers) for (const [k, v] of Object.entries(layer)) if (v !== undefined) m[k] = v;
  if (m["url"] === undefined)
    bad(
      "url",
      "the receiver's remote-write URL",
      undefined,
      "pass --url URL, TIDEMARK_REMOTE_WRITE_URL or remoteWrite.url",
    );
  const minBackoffMs = duration(m, "minBackoffMs");
  const maxBackoffMs = duration(m, "maxBackoffMs");
  if (maxBackoffMs < minBackoffMs) bad("maxBackoff", `at least minBackoff (${minBackoffMs} ms)`, m["maxBackoffMs"]);
  return Object.freeze({
    ...base,
    url: httpUrl(m["url"]),
    consumer: str(m, "consumer", /^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only (a JetStream consumer name)"),
    batchSize: int(m, "batchSize", 1, 100_000),
    queueCapacity: int(m, "queueCapacity", 1, 100_000_000),
    maxSeries: int(m, "maxSeries", 10, 100_000_000),
    minBackoffMs,
    maxBackoffMs,
    timeoutMs: duration(m, "timeoutMs"),
    ackWaitMs: duration(m, "ackWaitMs"),
    host: str(m, "host"),
    metricsPort: int(m, "metricsPort", 0, 65535),
    bearerToken: m["bearerToken"] === null ? null : str(m, "bearerToken"),
    logLevel: str(m, "logLevel"),
  });
}

function bad(field: string, allowed: string, got: unknown, hint = ""): never {
  throw new DashboardError(
    "TM_CONFIG_INVALID",
    `remote-write: ${field} must be ${allowed}, got ${JSON.stringify(got) ?? "nothing"}${hint ? `: ${hint}` : ""}`,
  );
}

function httpUrl(v: unknown): string {
  if (typeof v === "string" && URL.canParse(v) && /^https?:$/.test(new URL(v).protocol)) return v;
  return bad("url", "an http:// or https:// URL such as http://127.0.0.1:9090/api/v1/write", v);
}

/** `m[k]` through a shared field reader (`@tidemark/engine/config`); its error names the setting. */
function read<T>(m: Record<string, unknown>, k: string, reader: FieldReader<T>, field = k): T {
  try {
    return reader(m[k], field, { kind: "option", name: field });
  } catch (err) {
    if (err instanceof ConfigFieldError) return bad(field, err.expected, m[k]);
    throw err;
  }
}

function str(m: Record<string, unknown>, k: string, pattern?: RegExp, allowed = "a non-empty string"): string {
  return read(m, k, text(pattern, allowed));
}

function int(m: Record<string, unknown>, k: string, min: number, max: number): number {
  return read(m, k, integer(min, max));
}

function duration(m: Record<string, unknown>, k: string): number {
  return read(m, k, durationOf(0), k.replace(/Ms$/, ""));
}
