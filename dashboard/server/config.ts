import { fileURLToPath } from "node:url";
import {
  isAlertsConfig,
  NO_ALERTS,
  parseAlerts,
  scopeOf,
  withAlertOverrides,
  type AlertsConfig,
} from "./alerts/alerts-config.js";
import { parseSlos, type SloDefinition } from "./slo/slo-config.js";
import {
  bad,
  duration,
  ALERT_OVERRIDES,
  ENV,
  int,
  isLoopback,
  list,
  optionalStr,
  readTokensOf,
  recordOrigins,
  str,
} from "./config-values.js";

import { envLayer, fileLayer } from "./config-layers.js";

/**
 * The dashboard server's configuration: parsed once, validated, frozen (docs/websocket-protocol.md,
 * "Configuration").
 */
export interface DashboardConfig {
  readonly host: string;
  readonly port: number;
  /** NATS server URL, or a comma list of servers of one cluster. */
  readonly nats: string;
  /** NATS credentials, from TIDEMARK_NATS_USER + TIDEMARK_NATS_PASSWORD or TIDEMARK_NATS_TOKEN (secrets travel in the environment only). */
  readonly natsUser: string | null;
  readonly natsPassword: string | null;
  readonly natsToken: string | null;
  /** How much TM_PANES history (by pane publish time) to replay on start, ms. */
  readonly replayMs: number;
  /** Windows kept per series (policy, key, window size); older windows are forgotten. */
  readonly maxWindowsPerSeries: number;
  /** Panes kept in all (every series, route-level included); past it the oldest windows go. */
  readonly maxPanes: number;
  /** Windows kept per series for the Prometheus API (docs/prometheus-api.md); 8640 = 24 h of 10 s windows. */
  readonly promWindowsPerSeries: number;
  /** Windows kept in all for the Prometheus API (about 140 bytes each); past it the oldest windows go. */
  readonly promMaxWindows: number;
  /** Extra allowed WebSocket origins; the server's own origin is always allowed. */
  readonly allowedOrigins: readonly string[];
  /**
   * Read tokens (several while one is rotated out; docs/security.md): when any is set, REST, the
   * Prometheus API and the WebSocket need one. Off loopback at least one is required.
   */
  readonly readTokens: readonly string[];
  /** The first read token, or null (kept for callers that know one token only). */
  readonly readToken: string | null;
  /** Host header values (host or host:port) served when no read token is set (DNS rebinding; docs/security.md). */
  readonly allowedHosts: readonly string[];
  /** TLS certificate and key files (PEM); both or neither. */
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
  /** WebSocket clients at once, in all and per remote address. */
  readonly maxClients: number;
  readonly maxClientsPerAddress: number;
  /** Panels one client may subscribe to at once. */
  readonly maxPanelsPerClient: number;
  /** Bytes queued for one client (snapshots included) before it is disconnected to resume later. */
  readonly maxQueuedBytes: number;
  /** Subscribe frames per second per client (a bucket of this many, refilled at this rate). */
  readonly subscribesPerSecond: number;
  /** Prometheus API query limits (docs/prometheus-api.md, "Query limits"): series selected per query. */
  readonly queryMaxSeries: number;
  /** Samples one query holds at once (loaded, per step, in its result): `--query.max-samples`'s analogue. */
  readonly queryMaxSamples: number;
  /** How long one step of evaluation (subqueries included) may hold the event loop, ms. */
  readonly queryMaxStepMs: number;
  /** Bytes of one query's response body. */
  readonly queryMaxResponseBytes: number;
  /** A query's time, queueing included, ms: past it the answer is 503 `timeout`. */
  readonly queryTimeoutMs: number;
  /** Queries evaluated at once; more wait in a queue of queryMaxQueued, then are refused (503). */
  readonly queryMaxConcurrency: number;
  readonly queryMaxQueued: number;
  /**
   * HTTP timeouts (docs/operations.md, "HTTP timeouts"): a request's headers must arrive within
   * headersTimeoutMs and the whole request within requestTimeoutMs (408, connection closed); a
   * socket with no traffic either way for connectionTimeoutMs is closed. 0 turns one off. A
   * WebSocket, once upgraded, is under none of them.
   */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly connectionTimeoutMs: number;
  /** A client whose socket holds more than this many unsent bytes gets coalesced early panes. */
  readonly sendBufferBytes: number;
  /** Early panes queued per slow client; beyond it the oldest early panes are dropped (counted). */
  readonly maxQueuedEarly: number;
  /** Non-early frames queued per slow client before it is disconnected to resume later. */
  readonly maxQueuedFrames: number;
  /** Wait between retries while TM_PANES does not exist or NATS is unreachable, ms. */
  readonly retryMs: number;
  /** Directory of the built Svelte app. */
  readonly appDir: string;
  readonly logLevel: string;
  /**
   * Policies in discarding mode, whose session panes carry deltas (the session metrics add them
   * up): from the config file's top-level `policies`, as the engine reads them.
   */
  readonly discardingPolicies: readonly string[];
  /**
   * Alert rules and Alertmanagers: the config file's top-level `alerts` (docs/operations.md,
   * "Alerts"), validated against its policies and windows; Alertmanagers and the external URL
   * also from TIDEMARK_ALERTMANAGERS / TIDEMARK_ALERTS_EXTERNAL_URL and `--alertmanager`.
   */
  readonly alerts: AlertsConfig;
  /**
   * SLOs: the config file's top-level `slos` (docs/slo.md, "Definitions"), validated against its
   * policies and windows; their alerts go to the `alerts` section's Alertmanagers.
   */
  readonly slos: readonly SloDefinition[];
}

/** Layer keys read into `readTokens` besides `readToken` (a token or comma list) and `readTokens` (a list). */
const TOKEN_INPUTS = ["readTokenFile"] as const;
export type InputKey = keyof DashboardConfig | (typeof ALERT_OVERRIDES)[number] | (typeof TOKEN_INPUTS)[number];

/** What each layer may set; values are strings (env, flags) or JSON values (file). */
export type DashboardConfigInput = Partial<Record<InputKey, unknown>>;

const DEFAULTS: DashboardConfig = {
  host: "127.0.0.1",
  port: 3000,
  nats: "nats://127.0.0.1:4222",
  natsUser: null,
  natsPassword: null,
  natsToken: null,
  replayMs: 3_600_000,
  maxWindowsPerSeries: 720,
  maxPanes: 200_000,
  promWindowsPerSeries: 8640,
  promMaxWindows: 1_000_000,
  allowedOrigins: [],
  readTokens: [],
  readToken: null,
  allowedHosts: [],
  tlsCertFile: null,
  tlsKeyFile: null,
  maxClients: 500,
  maxClientsPerAddress: 32,
  maxPanelsPerClient: 256,
  maxQueuedBytes: 64 * 1024 * 1024,
  subscribesPerSecond: 20,
  queryMaxSeries: 20_000,
  queryMaxSamples: 5_000_000,
  queryMaxStepMs: 500,
  queryMaxResponseBytes: 64 * 1024 * 1024,
  queryTimeoutMs: 120_000,
  queryMaxConcurrency: 4,
  queryMaxQueued: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  connectionTimeoutMs: 300_000,
  sendBufferBytes: 256 * 1024,
  maxQueuedEarly: 2000,
  maxQueuedFrames: 20_000,
  retryMs: 1000,
  appDir: fileURLToPath(new URL("../app", import.meta.url)),
  logLevel: "info",
  discardingPolicies: [],
  alerts: NO_ALERTS,
  slos: [],
};

/** config-values.ts's environment names, each naming a setting (the compiler checks every one). */
const ENV_KEYS: Readonly<Record<string, InputKey>> = ENV;

/**
 * Reads the `dashboard` section of a JSON config file (tidemark.config.json), the NATS URL from
 * its top-level `nats` (`{ "url": … }`, or a plain URL string), and its top-level `alerts` and
 * `slos`, validated against the file's `policies` and `windows` (config-layers.ts).
 */
export function readConfigFile(path: string): DashboardConfigInput {
  return fileLayer(path) as DashboardConfigInput;
}

/** The environment's settings (`TIDEMARK_DASHBOARD_*`, `TIDEMARK_NATS*`, …; names in config-values.ts). */
export function envConfig(env: NodeJS.ProcessEnv): DashboardConfigInput {
  return envLayer(env, ENV_KEYS) as DashboardConfigInput;
}

/** defaults < file < env < flags; validated once and frozen. */
export function resolveConfig(...layers: DashboardConfigInput[]): DashboardConfig {
  const merged: Record<string, unknown> = { ...DEFAULTS };
  for (const layer of layers) for (const [k, v] of Object.entries(layer)) if (v !== undefined) merged[k] = v;
  recordOrigins(merged, layers);
  checkEachLayer(layers);
  const unknown = Object.keys(merged).filter(
    (k) => !(k in DEFAULTS) && ![...ALERT_OVERRIDES, ...TOKEN_INPUTS].includes(k as never),
  );
  if (unknown.length > 0) bad(unknown[0] ?? "", "is not a dashboard setting", Object.keys(DEFAULTS).join(", "));
  const readTokens = Object.freeze(readTokensOf(merged));
  const host = str(merged, "host");
  if (readTokens.length === 0 && !isLoopback(host))
    bad(
      "readToken",
      `no read token configured but host ${host} is not loopback`,
      'set TIDEMARK_DASHBOARD_TOKEN or TIDEMARK_DASHBOARD_TOKEN_FILE, or "readToken" in the config file\'s dashboard section',
    );
  const tlsCertFile = optionalStr(merged, "tlsCertFile");
  const tlsKeyFile = optionalStr(merged, "tlsKeyFile");
  if ((tlsCertFile === null) !== (tlsKeyFile === null))
    bad(
      tlsCertFile === null ? "tlsCertFile" : "tlsKeyFile",
      "is missing",
      "give both tlsCertFile and tlsKeyFile, or neither",
    );
  return Object.freeze({
    ...readScalars(merged),
    host,
    readTokens,
    readToken: readTokens[0] ?? null,
    tlsCertFile,
    tlsKeyFile,
    ...httpTimeouts(merged),
    alerts: alertsOf(merged),
    slos: slosOf(merged["slos"]),
  });
}

/** The HTTP timeouts, each within the one that contains it (docs/operations.md, "HTTP timeouts"). */
function httpTimeouts(
  merged: Record<string, unknown>,
): Pick<DashboardConfig, "headersTimeoutMs" | "requestTimeoutMs" | "connectionTimeoutMs"> {
  const headersTimeoutMs = duration(merged, "headersTimeoutMs");
  const requestTimeoutMs = duration(merged, "requestTimeoutMs");
  const connectionTimeoutMs = duration(merged, "connectionTimeoutMs");
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs)
    bad(
      "headersTimeoutMs",
      `(${headersTimeoutMs} ms) is longer than requestTimeoutMs (${requestTimeoutMs} ms), which includes the headers`,
      "lower it or raise requestTimeoutMs",
    );
  const queryTimeoutMs = duration(merged, "queryTimeoutMs");
  if (connectionTimeoutMs > 0 && connectionTimeoutMs <= queryTimeoutMs)
    bad(
      "connectionTimeoutMs",
      `(${connectionTimeoutMs} ms) is not longer than queryTimeoutMs (${queryTimeoutMs} ms): a query's socket is idle while it runs and would be cut`,
      "raise it above queryTimeoutMs, or 0 for none",
    );
  return { headersTimeoutMs, requestTimeoutMs, connectionTimeoutMs };
}

type Raw = Record<string, unknown>;

/** The plain settings' readers (config-values.ts): each layer's own value is checked with them, then the merged one read. */
const SCALARS = {
  port: (o: Raw) => int(o, "port", 0, 65535),
  nats: (o: Raw) => str(o, "nats"),
  natsUser: (o: Raw) => optionalStr(o, "natsUser"),
  natsPassword: (o: Raw) => optionalStr(o, "natsPassword"),
  natsToken: (o: Raw) => optionalStr(o, "natsToken"),
  replayMs: (o: Raw) => duration(o, "replayMs"),
  maxWindowsPerSeries: (o: Raw) => int(o, "maxWindowsPerSeries", 1, 100_000),
  maxPanes: (o: Raw) => int(o, "maxPanes", 10, 100_000_000),
  promWindowsPerSeries: (o: Raw) => int(o, "promWindowsPerSeries", 1, 10_000_000),
  promMaxWindows: (o: Raw) => int(o, "promMaxWindows", 10, 1_000_000_000),
  allowedOrigins: (o: Raw): readonly string[] => Object.freeze(list(o, "allowedOrigins")),
  allowedHosts: (o: Raw): readonly string[] => Object.freeze(list(o, "allowedHosts").map((h) => h.toLowerCase())),
  maxClients: (o: Raw) => int(o, "maxClients", 1, 1_000_000),
  maxClientsPerAddress: (o: Raw) => int(o, "maxClientsPerAddress", 1, 1_000_000),
  maxPanelsPerClient: (o: Raw) => int(o, "maxPanelsPerClient", 1, 1_000_000),
  maxQueuedBytes: (o: Raw) => int(o, "maxQueuedBytes", 64 * 1024, 2 ** 40),
  subscribesPerSecond: (o: Raw) => int(o, "subscribesPerSecond", 1, 1_000_000),
  queryMaxSeries: (o: Raw) => int(o, "queryMaxSeries", 1, 1_000_000_000),
  queryMaxSamples: (o: Raw) => int(o, "queryMaxSamples", 1, 2 ** 40),
  queryMaxStepMs: (o: Raw) => duration(o, "queryMaxStepMs"),
  queryMaxResponseBytes: (o: Raw) => int(o, "queryMaxResponseBytes", 1024, 2 ** 40),
  queryTimeoutMs: (o: Raw) => duration(o, "queryTimeoutMs"),
  queryMaxConcurrency: (o: Raw) => int(o, "queryMaxConcurrency", 1, 10_000),
  queryMaxQueued: (o: Raw) => int(o, "queryMaxQueued", 0, 1_000_000),
  headersTimeoutMs: (o: Raw) => duration(o, "headersTimeoutMs"),
  requestTimeoutMs: (o: Raw) => duration(o, "requestTimeoutMs"),
  connectionTimeoutMs: (o: Raw) => duration(o, "connectionTimeoutMs"),
  sendBufferBytes: (o: Raw) => int(o, "sendBufferBytes", 1024, 1 << 30),
  maxQueuedEarly: (o: Raw) => int(o, "maxQueuedEarly", 1, 10_000_000),
  maxQueuedFrames: (o: Raw) => int(o, "maxQueuedFrames", 1, 10_000_000),
  retryMs: (o: Raw) => duration(o, "retryMs"),
  appDir: (o: Raw) => str(o, "appDir"),
  logLevel: (o: Raw) => str(o, "logLevel"),
  discardingPolicies: (o: Raw): readonly string[] => Object.freeze(list(o, "discardingPolicies")),
} satisfies Partial<Record<keyof DashboardConfig, (o: Raw) => unknown>>;

type Scalars = { [K in keyof typeof SCALARS]: ReturnType<(typeof SCALARS)[K]> };

function readScalars(o: Raw): Scalars {
  return Object.fromEntries(Object.entries(SCALARS).map(([k, read]) => [k, read(o)])) as Scalars;
}

/**
 * Each layer's own values checked before they are merged, so a bad value in the file is an error
 * even while a flag overrides it (docs/decisions/0046-layered-config.md); the error names its layer.
 */
function checkEachLayer(layers: readonly DashboardConfigInput[]): void {
  for (const layer of layers) {
    const own: Raw = { ...layer };
    recordOrigins(own, [layer]);
    for (const [k, read] of Object.entries(SCALARS)) if (own[k] !== undefined) read(own);
  }
}

/** The validated `slos`: a file's are validated already (frozen); raw JSON from code against the default policies and windows. */
function slosOf(given: unknown): readonly SloDefinition[] {
  if (Array.isArray(given) && Object.isFrozen(given) && given.every((s) => Object.isFrozen(s)))
    return given as SloDefinition[];
  return parseSlos(given, scopeOf({}, "config"), "config");
}

/** The validated `alerts` (raw JSON from code is validated against the default policies and windows), overrides on top. */
function alertsOf(merged: Record<string, unknown>): AlertsConfig {
  const given = merged["alerts"];
  const alerts = isAlertsConfig(given) ? given : parseAlerts(given, scopeOf({}, "config"), "config");
  return withAlertOverrides(
    alerts,
    { alertmanagers: merged["alertmanagers"], externalUrl: merged["alertsExternalUrl"] },
    "TIDEMARK_ALERTMANAGERS / TIDEMARK_ALERTS_EXTERNAL_URL / --alertmanager",
  );
}
