/**
 * Read access to the dashboard (docs/security.md): read tokens compared as SHA-256 digests with
 * timingSafeEqual (as ingest's bearer tokens), several at once for rotation; the origin check of
 * the WebSocket; the Host allow-list that stops DNS rebinding when no read token is set.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { DashboardConfig } from "./config.js";
import { DashboardError } from "./errors.js";

/** The prefix of a Sec-WebSocket-Protocol value that carries a read token (`tidemark.token.<token>`). */
export const WS_TOKEN_PROTOCOL = "tidemark.token.";
/** The protocol the server selects when a client offers it (browsers need one selected). */
export const WS_PROTOCOL = "tidemark";

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();
const digestsOf = new WeakMap<readonly string[], readonly Buffer[]>();

/** True when `given` is one of the configured read tokens; every token is compared (no early exit). */
export function isReadToken(config: Pick<DashboardConfig, "readTokens">, given: string | undefined): boolean {
  if (given === undefined || given === "") return false;
  let digests = digestsOf.get(config.readTokens);
  if (!digests) digestsOf.set(config.readTokens, (digests = config.readTokens.map(digest)));
  const d = digest(given);
  let ok = false;
  for (const t of digests) ok = timingSafeEqual(t, d) || ok;
  return ok;
}

/** The token a request carries: Authorization Bearer, basic auth's password, a token protocol, or `?token=` (discouraged). */
export function tokenOf(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization ?? "";
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+(\S+)\s*$/i.exec(auth);
  if (basic) {
    const decoded = Buffer.from(basic[1] as string, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon >= 0) return decoded.slice(colon + 1);
  }
  const protocols = String(req.headers["sec-websocket-protocol"] ?? "").split(",");
  const offered = protocols.map((p) => p.trim()).find((p) => p.startsWith(WS_TOKEN_PROTOCOL));
  if (offered !== undefined) return offered.slice(WS_TOKEN_PROTOCOL.length);
  const query = (req.query ?? {}) as Record<string, unknown>;
  return typeof query["token"] === "string" ? query["token"] : undefined;
}

/** True when the request carries a read token, or none is configured. */
export function hasReadToken(config: Pick<DashboardConfig, "readTokens">, req: FastifyRequest): boolean {
  return config.readTokens.length === 0 || isReadToken(config, tokenOf(req));
}

/** True for non-browser clients (no Origin), the server's own origin, and configured origins. */
export function originAllowed(config: DashboardConfig, req: FastifyRequest): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  if (config.allowedOrigins.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * With a read token any Host is served. Without one (loopback only) the Host must name this
 * machine's loopback, the bind host, or a configured `allowedHosts` entry (with or without port).
 */
export function hostAllowed(config: DashboardConfig, host: string | undefined): boolean {
  if (config.readTokens.length > 0) return true;
  if (host === undefined) return false;
  const h = host.toLowerCase();
  const name = h.startsWith("[") ? h.slice(0, h.indexOf("]") + 1) : h.replace(/:\d+$/, "");
  return (
    LOOPBACK_NAMES.has(name) ||
    (isIP(name) === 4 && name.startsWith("127.")) ||
    name === config.host.toLowerCase() ||
    config.allowedHosts.includes(h) ||
    config.allowedHosts.includes(name)
  );
}

/** onRequest hook: 421 for a Host not allowed (no read token set). */
export function hostGuard(config: DashboardConfig) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (hostAllowed(config, req.headers.host)) return;
    const e = new DashboardError(
      "TM_DASHBOARD_HOST_REJECTED",
      "this Host is not served without a read token: open the dashboard by its loopback address, add the name to dashboard.allowedHosts (TIDEMARK_DASHBOARD_HOSTS), or set a read token",
    );
    await reply.code(421).send({ code: e.code, error: e.message });
  };
}

/** True when a WebSocket upgrade offers the `tidemark` protocol: it may send its token in the first frame. */
function offersProtocol(req: FastifyRequest): boolean {
  return String(req.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .some((p) => p.trim() === WS_PROTOCOL);
}

/**
 * preValidation hook for the API and the WebSocket. `wsFirstFrame`: an upgrade that offers the
 * `tidemark` protocol and carries no token may send it in its first frame (ws-connection.ts).
 */
export function guard(config: DashboardConfig, checkOrigin: boolean, wsFirstFrame = false) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (checkOrigin && !originAllowed(config, req)) {
      const e = new DashboardError(
        "TM_DASHBOARD_ORIGIN_REJECTED",
        `origin ${req.headers.origin} may not open the dashboard WebSocket: add it to dashboard.allowedOrigins`,
      );
      await reply.code(403).send({ code: e.code, error: e.message });
      return;
    }
    if (hasReadToken(config, req)) return;
    if (wsFirstFrame && tokenOf(req) === undefined && offersProtocol(req)) return;
    const e = new DashboardError(
      "TM_DASHBOARD_UNAUTHORIZED",
      "a read token is required: send Authorization: Bearer <token> (a WebSocket: offer the protocol tidemark and send {type: auth, token} first, or offer tidemark.token.<token>)",
    );
    await reply.code(401).send({ code: e.code, error: e.message });
  };
}
