/**
 * One WebSocket connection from upgrade to close (docs/websocket-protocol.md, "Auth";
 * docs/security.md): a connection slot per address and in all, the read token from the upgrade
 * (header or token protocol) or else from a first `{"type":"auth","token":…}` frame, then the
 * client frames of an attached session.
 */
import type { FastifyRequest } from "fastify";
import { hasReadToken, isReadToken } from "./auth.js";
import { parseClientFrame } from "./client-frame.js";
import type { ClientHub } from "./client-hub.js";
import type { ClientSession, ClientSocket } from "./client-session.js";
import type { DashboardConfig } from "./config.js";
import type { DashboardError } from "./errors.js";
import { frame } from "./frames.js";
import type { DashboardMetrics } from "./metrics.js";

/** Close codes: a full server (try again later, RFC 6455) and a missing or wrong read token. */
export const CLOSE_TRY_AGAIN = 1013;
export const CLOSE_UNAUTHORIZED = 4401;
/** A connection that sends no auth frame within this is closed. */
export const AUTH_WAIT_MS = 10_000;

/** Socket events the server listens to (a `ws` WebSocket). */
export interface WsSocket extends ClientSocket {
  on(event: "message", cb: (data: Buffer) => void): void;
  on(event: "close", cb: () => void): void;
}

export interface ConnectionDeps {
  readonly config: DashboardConfig;
  readonly hub: ClientHub;
  readonly metrics: DashboardMetrics;
  readonly onAttach: () => void;
  readonly onDetach: () => void;
}

/** Serves one upgraded socket; every listener is attached synchronously (no frame is missed). */
export function serveConnection(socket: WsSocket, req: FastifyRequest, deps: ConnectionDeps): void {
  const { config, hub } = deps;
  const address = req.ip;
  const refused = hub.admit(address);
  if (refused) {
    socket.send(errorFrame(refused));
    socket.close(CLOSE_TRY_AGAIN, "limit reached: try again later");
    return;
  }
  let session: ClientSession | undefined;
  let authTimer: NodeJS.Timeout | undefined;
  const attach = (): void => {
    clearTimeout(authTimer);
    session = hub.attach(socket);
    deps.onAttach();
  };
  if (hasReadToken(config, req)) attach();
  else authTimer = setTimeout(() => refuse(socket, deps, "no auth frame within 10 s"), AUTH_WAIT_MS);
  socket.on("message", (data) => {
    // An auth frame on an authorized connection (a client that always sends one) is a no-op.
    if (session) return authTokenOf(data) === undefined ? handleFrame(session, data) : undefined;
    const token = authTokenOf(data);
    if (isReadToken(config, token)) attach();
    else refuse(socket, deps, token === undefined ? "the first frame is not an auth frame" : "the token is not valid");
  });
  socket.on("close", () => {
    clearTimeout(authTimer);
    hub.release(address);
    if (!session) return;
    hub.detach(session);
    deps.onDetach();
  });
}

function handleFrame(session: ClientSession, data: Buffer): void {
  try {
    const f = parseClientFrame(data.toString("utf8"));
    if (f.type === "subscribe") session.subscribe(f.panels, f.since);
    else if (f.type === "unsubscribe") session.unsubscribe(f.panels);
    else session.sendControl(frame({ type: "pong" }));
  } catch (err) {
    session.sendControl(errorFrame(err as DashboardError));
  }
}

/** The token of a `{"type":"auth","token":…}` frame, else undefined. */
function authTokenOf(data: Buffer): string | undefined {
  try {
    const f = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
    return f["type"] === "auth" && typeof f["token"] === "string" ? f["token"] : undefined;
  } catch {
    return undefined;
  }
}

function refuse(socket: WsSocket, deps: ConnectionDeps, why: string): void {
  deps.metrics.wsAuthFailures.inc();
  socket.send(
    frame({
      type: "error",
      code: "TM_DASHBOARD_UNAUTHORIZED",
      message: `a read token is required (${why}): send {"type":"auth","token":"<token>"} as the first frame, or the Sec-WebSocket-Protocol tidemark.token.<token>`,
    }),
  );
  socket.close(CLOSE_UNAUTHORIZED, "read token required");
}

function errorFrame(e: DashboardError): string {
  return frame({ type: "error", code: e.code ?? "TM_DASHBOARD_FRAME_INVALID", message: e.message });
}
