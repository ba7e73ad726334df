/**
 * The names a dashboard setting goes by (environment, flags) and the value parsers of
 * config.ts: every error names the setting, where it can be set, and the fix.
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { parseDuration } from "@tidemark/engine/core";
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

export function bad(field: string, what: string, hint: string): never {
  const where = settingNames(field);
  throw new DashboardError("TM_DASHBOARD_CONFIG_INVALID", `dashboard setting "${field}" (${where}) ${what}: ${hint}`);
}

export function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  if (typeof v !== "string" || v === "")
    bad(k, `must be a non-empty string, got ${JSON.stringify(v)}`, "set it or leave it out");
  return v;
}

export function optionalStr(o: Record<string, unknown>, k: string): string | null {
  return o[k] === null || o[k] === "" ? null : str(o, k);
}

export function int(o: Record<string, unknown>, k: string, min: number, max: number): number {
  const v = o[k];
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
    bad(k, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`, "fix the value");
  return n;
}

export function duration(o: Record<string, unknown>, k: string): number {
  try {
    return parseDuration(o[k] as string | number);
  } catch {
    return bad(k, `must be a duration, got ${JSON.stringify(o[k])}`, "write e.g. 500ms, 10s, 1m, 1h");
  }
}

export function list(o: Record<string, unknown>, k: string): string[] {
  const v = o[k];
  if (typeof v === "string")
    return v
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  if (Array.isArray(v) && v.every((s) => typeof s === "string")) return v;
  return bad(k, `must be a list of strings (or a comma-separated string), got ${JSON.stringify(v)}`, "fix the value");
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
