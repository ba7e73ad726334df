/**
 * The names a dashboard setting goes by (environment, flags) and the value parsers of
 * config.ts: every error names the setting, where it can be set, and the fix.
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import {
  ConfigFieldError,
  duration as durationOf,
  integer,
  list as listOf,
  text,
  type FieldReader,
} from "@tidemark/engine/config";
import { DashboardError } from "./errors.js";

/** Env names, in increasing precedence where two set the same setting. */
export const ENV = {
  TIDEMARK_DASHBOARD_HOST: "host",
  TIDEMARK_DASHBOARD_PORT: "port",
  TIDEMARK_NATS: "nats",
  TIDEMARK_NATS_URL: "nats",
  TIDEMARK_NATS_USER: "natsUser",
  TIDEMARK_NATS_PASSWORD: "natsPassword",
  TIDEMARK_NATS_TOKEN: "natsToken",
  TIDEMARK_DASHBOARD_REPLAY: "replayMs",
  TIDEMARK_DASHBOARD_ORIGINS: "allowedOrigins",
  TIDEMARK_DASHBOARD_TOKEN: "readToken",
  TIDEMARK_DASHBOARD_TOKEN_FILE: "readTokenFile",
  TIDEMARK_DASHBOARD_HOSTS: "allowedHosts",
  TIDEMARK_DASHBOARD_TLS_CERT: "tlsCertFile",
  TIDEMARK_DASHBOARD_TLS_KEY: "tlsKeyFile",
  TIDEMARK_DASHBOARD_MAX_CLIENTS: "maxClients",
  TIDEMARK_DASHBOARD_MAX_CLIENTS_PER_ADDRESS: "maxClientsPerAddress",
  TIDEMARK_DASHBOARD_MAX_PANELS: "maxPanelsPerClient",
  TIDEMARK_DASHBOARD_MAX_QUEUED_BYTES: "maxQueuedBytes",
  TIDEMARK_DASHBOARD_SUBSCRIBE_RATE: "subscribesPerSecond",
  TIDEMARK_DASHBOARD_QUERY_MAX_SERIES: "queryMaxSeries",
  TIDEMARK_DASHBOARD_QUERY_MAX_SAMPLES: "queryMaxSamples",
  TIDEMARK_DASHBOARD_QUERY_MAX_STEP_TIME: "queryMaxStepMs",
  TIDEMARK_DASHBOARD_QUERY_MAX_RESPONSE_BYTES: "queryMaxResponseBytes",
  TIDEMARK_DASHBOARD_QUERY_TIMEOUT: "queryTimeoutMs",
  TIDEMARK_DASHBOARD_QUERY_MAX_CONCURRENCY: "queryMaxConcurrency",
  TIDEMARK_DASHBOARD_QUERY_MAX_QUEUED: "queryMaxQueued",
  TIDEMARK_DASHBOARD_HEADERS_TIMEOUT: "headersTimeoutMs",
  TIDEMARK_DASHBOARD_REQUEST_TIMEOUT: "requestTimeoutMs",
  TIDEMARK_DASHBOARD_CONNECTION_TIMEOUT: "connectionTimeoutMs",
  TIDEMARK_LOG_LEVEL: "logLevel",
  TIDEMARK_ALERTMANAGERS: "alertmanagers",
  TIDEMARK_ALERTS_EXTERNAL_URL: "alertsExternalUrl",
} as const;

/** Layer keys that are not settings of their own: they override a part of `alerts`. */
export const ALERT_OVERRIDES = ["alertmanagers", "alertsExternalUrl"] as const;

/** Flags that set a setting, so an error names what the user typed. */
export const FLAGS: Readonly<Partial<Record<string, string>>> = {
  host: "--host",
  port: "--port",
  nats: "--nats",
  replayMs: "--replay",
  readToken: "--token",
  readTokenFile: "--token-file",
  tlsCertFile: "--tls-cert",
  tlsKeyFile: "--tls-key",
  maxClients: "--max-clients",
  maxClientsPerAddress: "--max-clients-per-address",
  maxPanelsPerClient: "--max-panels",
  maxQueuedBytes: "--max-queued-bytes",
  subscribesPerSecond: "--subscribe-rate",
  queryMaxSeries: "--query-max-series",
  queryMaxSamples: "--query-max-samples",
  queryMaxStepMs: "--query-max-step-time",
  queryMaxResponseBytes: "--query-max-response-bytes",
  queryTimeoutMs: "--query-timeout",
  queryMaxConcurrency: "--query-max-concurrency",
  queryMaxQueued: "--query-max-queued",
  headersTimeoutMs: "--headers-timeout",
  requestTimeoutMs: "--request-timeout",
  connectionTimeoutMs: "--connection-timeout",
};

/** Where a setting is set: its flag, its environment variables, its key in the config file. */
export function settingNames(field: string): string {
  const env = Object.entries(ENV)
    .filter(([, k]) => k === field)
    .map(([name]) => name);
  return [FLAGS[field], ...env, `dashboard.${field} in the config file`].filter(Boolean).join(", ");
}

/**
 * Where each setting of a merged layer object came from, when its layer said so (`fromSource`):
 * `resolveConfig` records it so an error names the variable or file key as well as the setting.
 */
const ORIGINS = new WeakMap<object, Map<string, string>>();
const LAYER_SOURCES = new WeakMap<object, (key: string) => string>();

/** Marks a layer's source (env, file), naming each key's origin in errors. */
export function fromSource<T extends object>(layer: T, name: (key: string) => string): T {
  LAYER_SOURCES.set(layer, name);
  return layer;
}

/** Records, for `merged`, the layer each key's winning value came from (later layers win). */
export function recordOrigins(merged: object, layers: readonly object[]): void {
  const origins = new Map<string, string>();
  for (const layer of layers) {
    const name = LAYER_SOURCES.get(layer);
    for (const [k, v] of Object.entries(layer)) {
      if (v === undefined) continue;
      if (name) origins.set(k, name(k));
      else origins.delete(k);
    }
  }
  ORIGINS.set(merged, origins);
}

export function bad(field: string, what: string, hint: string, o?: object): never {
  const where = settingNames(field);
  const from = o === undefined ? undefined : ORIGINS.get(o)?.get(field);
  throw new DashboardError(
    "TM_DASHBOARD_CONFIG_INVALID",
    `dashboard setting "${field}" (${where})${from ? ` from ${from}` : ""} ${what}: ${hint}`,
  );
}

/** `o[k]` through a shared field reader (`@tidemark/engine/config`); its error names the setting and its source. */
function read<T>(o: Record<string, unknown>, k: string, reader: FieldReader<T>, hint = "fix the value"): T {
  try {
    return reader(o[k], k, { kind: "option", name: ORIGINS.get(o)?.get(k) ?? k });
  } catch (err) {
    if (err instanceof ConfigFieldError) return bad(k, err.requirement, hint, o);
    throw err;
  }
}

export function str(o: Record<string, unknown>, k: string): string {
  return read(o, k, text(), "set it or leave it out");
}

export function optionalStr(o: Record<string, unknown>, k: string): string | null {
  return o[k] === null || o[k] === "" ? null : str(o, k);
}

export function int(o: Record<string, unknown>, k: string, min: number, max: number): number {
  return read(o, k, integer(min, max));
}

export function duration(o: Record<string, unknown>, k: string): number {
  return read(o, k, durationOf(0));
}

export function list(o: Record<string, unknown>, k: string): string[] {
  return read(o, k, listOf());
}

/** Every read token: `readToken` (one, or a comma list), `readTokens` (a list) and a file of them (one a line). */
export function readTokensOf(o: Record<string, unknown>): string[] {
  const tokens = [...(o["readToken"] === null ? [] : list(o, "readToken"))];
  if (o["readTokens"] !== undefined) tokens.push(...list(o, "readTokens"));
  const file = o["readTokenFile"];
  if (file !== undefined && file !== null && file !== "") {
    let text: string;
    try {
      text = readFileSync(str(o, "readTokenFile"), "utf8");
    } catch (err) {
      return bad(
        "readTokenFile",
        `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
        "give a readable file of tokens, one a line",
      );
    }
    tokens.push(
      ...text
        .split(/[\r\n,]+/)
        .map((t) => t.trim())
        .filter((t) => t !== ""),
    );
  }
  for (const t of tokens)
    if (!/^[\x21-\x7e]+$/.test(t))
      bad(
        "readToken",
        "must be tokens of printable characters without spaces",
        "make one with e.g. openssl rand -base64 24",
      );
  return [...new Set(tokens)];
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));
}
