/**
 * HTTP hardening of the dashboard (docs/security.md): TLS from certificate and key files, the
 * security headers of every reply (a content security policy the Svelte build satisfies on the
 * page), and URLs with their credentials removed before they are logged.
 */
import { readFileSync } from "node:fs";
import type { ServerOptions } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { DashboardConfig } from "./config.js";
import { DashboardError } from "./errors.js";

/**
 * Fastify's server options: the HTTP timeouts (docs/operations.md, "HTTP timeouts") and, with
 * tlsCertFile / tlsKeyFile, TLS. Node checks the header and request timeouts every
 * connectionsCheckingInterval (30 s by default): half the smaller bound here, from 50 ms to 1 s.
 */
export function serverOptions(
  config: Pick<
    DashboardConfig,
    "tlsCertFile" | "tlsKeyFile" | "headersTimeoutMs" | "requestTimeoutMs" | "connectionTimeoutMs"
  >,
): { http?: ServerOptions; https?: ServerOptions; requestTimeout: number; connectionTimeout: number } {
  const bounds = [config.headersTimeoutMs, config.requestTimeoutMs].filter((b) => b > 0);
  const timeouts: ServerOptions = {
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval:
      bounds.length === 0 ? 1000 : Math.max(50, Math.min(1000, Math.floor(Math.min(...bounds) / 2))),
  };
  const { https } = httpsOptions(config);
  return {
    ...(https ? { https: { ...https, ...timeouts } } : { http: timeouts }),
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.connectionTimeoutMs,
  };
}

/** Fastify's `https` option from tlsCertFile / tlsKeyFile, or nothing (plain HTTP). */
export function httpsOptions(config: Pick<DashboardConfig, "tlsCertFile" | "tlsKeyFile">): {
  https?: { cert: Buffer; key: Buffer };
} {
  if (config.tlsCertFile === null || config.tlsKeyFile === null) return {};
  return { https: { cert: pem(config.tlsCertFile, "tlsCertFile"), key: pem(config.tlsKeyFile, "tlsKeyFile") } };
}

function pem(path: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new DashboardError(
      "TM_DASHBOARD_TLS",
      `dashboard setting "${field}" names ${path}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}): give a readable PEM file`,
    );
  }
}

/**
 * The page may load scripts, styles and images from itself only (its icon is a data: URI) and
 * talk to its own origin, the WebSocket included; it may not be framed. No inline script or
 * style: the Svelte build sets styles through the CSSOM, which a policy does not govern
 * (test/src/security/browser-csp.test.ts watches for violations in chromium).
 */
function contentSecurityPolicy(host: string | undefined): string {
  const self = host ? ` ws://${host} wss://${host}` : "";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${self}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** onSend hook: nosniff on every reply; on HTML, the content security policy and frame denial. */
export async function securityHeaders(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "no-referrer");
  const type = String(reply.getHeader("content-type") ?? "");
  if (type.startsWith("text/html")) {
    reply.header("content-security-policy", contentSecurityPolicy(req.headers.host));
    reply.header("x-frame-options", "DENY");
  }
  return payload;
}

/**
 * Fastify error handler: a client error keeps its message (it names what to fix); anything else
 * answers 500 without internal text, which goes to the log with the request (masked) instead.
 */
export function answerErrors(
  err: Error & { statusCode?: number; code?: string },
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const status = err.statusCode ?? 500;
  if (status < 500)
    return reply.code(status).send({ code: err.code ?? "TM_DASHBOARD_QUERY_INVALID", error: err.message });
  req.log.error({ err, req: requestForLog(req) }, "request failed");
  const e = new DashboardError("TM_DASHBOARD_INTERNAL", "internal error: the server log has the details");
  return reply.code(500).send({ code: e.code, error: e.message });
}

/** A request as logged: method, path with any `token` query value masked, remote address. */
export function requestForLog(req: { method?: string; url?: string; ip?: string }): Record<string, unknown> {
  return { method: req.method, url: (req.url ?? "").replace(/([?&]token=)[^&#]*/gi, "$1***"), remoteAddress: req.ip };
}
