/**
 * The dashboard's read token under `tidemark up` (docs/security.md): a dashboard bound off
 * loopback must have one, so when the configuration binds it so and sets none, `up` generates
 * one, keeps it in <data>/dashboard-token (mode 0600, reused by the next `up`), hands it to the
 * dashboard in TIDEMARK_DASHBOARD_TOKEN and prints it beside the ingest token.
 */
import type { TidemarkConfig } from "./tidemark-config.js";
import { localToken } from "./ingest-token.js";

export const DASHBOARD_TOKEN_FILE = "dashboard-token";

export interface DashboardToken {
  /** Environment for the roles (empty when nothing was generated). */
  readonly env: Record<string, string>;
  /** The generated token, or null when the dashboard is on loopback or a token is configured. */
  readonly token: string | null;
  readonly created: boolean;
  readonly host: string;
}

export function dashboardToken(config: TidemarkConfig, env: NodeJS.ProcessEnv): DashboardToken {
  const section = (config.document.dashboard ?? {}) as Record<string, unknown>;
  const host = String(env.TIDEMARK_DASHBOARD_HOST || section.host || "127.0.0.1");
  const configured =
    Boolean(env.TIDEMARK_DASHBOARD_TOKEN || env.TIDEMARK_DASHBOARD_TOKEN_FILE) ||
    ["readToken", "readTokens", "readTokenFile"].some((k) => section[k] !== undefined && section[k] !== null);
  if (configured || isLoopback(host)) return { env: {}, token: null, created: false, host };
  const { token, created } = localToken(config.data, DASHBOARD_TOKEN_FILE);
  return { env: { TIDEMARK_DASHBOARD_TOKEN: token }, token, created, host };
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
