import type { FastifyReply, FastifyRequest } from "fastify";
import type { DashboardConfig } from "./config.js";
import { DashboardError } from "./errors.js";

/** True when the request carries the read token (`?token=` or `Authorization: Bearer`), or none is configured. */
export function hasReadToken(config: DashboardConfig, req: FastifyRequest): boolean {
  if (config.readToken === null) return true;
  const query = (req.query ?? {}) as Record<string, unknown>;
  if (query["token"] === config.readToken) return true;
  return req.headers.authorization === `Bearer ${config.readToken}`;
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

/** preValidation hook for the API and the WebSocket. */
export function guard(config: DashboardConfig, checkOrigin: boolean) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (checkOrigin && !originAllowed(config, req)) {
      const e = new DashboardError(
        "TM_DASHBOARD_ORIGIN_REJECTED",
        `origin ${req.headers.origin} may not open the dashboard WebSocket: add it to dashboard.allowedOrigins`,
      );
      await reply.code(403).send({ code: e.code, error: e.message });
      return;
    }
    if (!hasReadToken(config, req)) {
      const e = new DashboardError(
        "TM_DASHBOARD_UNAUTHORIZED",
        "a read token is required: pass ?token=<token> or Authorization: Bearer <token>",
      );
      await reply.code(401).send({ code: e.code, error: e.message });
    }
  };
}
