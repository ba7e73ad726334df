import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { parseDuration } from "@tidemark/engine/core";
import { DashboardError } from "./errors.js";
import type { PaneStore } from "./pane-store.js";
import { policiesFor } from "./policies-query.js";
import type { StatusView } from "./status-view.js";

/** REST: `/api/panes`, `/api/sessions`, `/api/policies[?window=]`, `/api/status` (docs/websocket-protocol.md, REST section). */
export function apiRoutes(app: FastifyInstance, store: PaneStore, status: StatusView): void {
  const panes = (sessions: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    let filter;
    try {
      const q = singleValues(req.query as Record<string, string | string[] | undefined>);
      filter = { ...paneQuery(q), ...(sessions ? { metric: "sessions" as const, route: undefined } : {}) };
    } catch (err) {
      const e = err as DashboardError;
      return reply.code(400).send({ code: e.code, error: e.message });
    }
    let body = "";
    for (const s of store.select(filter)) {
      if (s.pane.window.start >= filter.to) continue;
      body += `${body === "" ? "" : ","}${s.json}`;
    }
    return reply.type("application/json").send(`{"panes":[${body}]}`);
  };
  app.get("/api/panes", panes(false));
  app.get("/api/sessions", panes(true));

  app.get("/api/policies", async (req: FastifyRequest, reply: FastifyReply) => {
    let windowMs: number | null = null;
    try {
      const w = singleValues(req.query as Record<string, string | string[] | undefined>)["window"];
      if (w !== undefined && w !== "") windowMs = duration(w, "window");
    } catch (err) {
      const e = err as DashboardError;
      return reply.code(400).send({ code: e.code, error: e.message });
    }
    const answer = policiesFor(status.view().frontier, windowMs);
    if (!("invalid" in answer)) return answer;
    const e = queryError("window", answer.invalid);
    return reply.code(400).send({ code: e.code, error: e.message });
  });

  app.get("/api/status", async () => status.view());
}

/** The query with one value per parameter; a repeated parameter is refused, naming it. */
function singleValues(q: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(q ?? {})) {
    if (Array.isArray(v))
      throw queryError(
        k,
        `is given ${v.length} times: give it once${k === "service" ? " (a comma list for several services)" : ""}`,
      );
    out[k] = v;
  }
  return out;
}

function paneQuery(q: Record<string, string | undefined>) {
  const policy = q["policy"];
  if (!policy) throw queryError("policy", "is required, e.g. ?policy=billing");
  if (!q["window"]) throw queryError("window", "is required, e.g. ?window=60s");
  const windowMs = duration(q["window"], "window");
  // A comma list; "*" is the engine's all-services panes' key, selected like any service (docs/websocket-protocol.md, REST).
  const services = q["service"] ? q["service"].split(",").filter((s) => s !== "") : undefined;
  return {
    policy,
    windowMs,
    services,
    route: q["route"] || undefined,
    from: time(q["from"], "from", 0),
    to: time(q["to"], "to", Number.MAX_SAFE_INTEGER),
  };
}

function duration(v: string, field: string): number {
  try {
    const ms = parseDuration(v);
    if (ms > 0) return ms;
  } catch {
    // reported below
  }
  throw queryError(field, `must be a duration such as 10s or 60s, got "${v}"`);
}

/** A time as ms since epoch or an ISO-8601 string. */
function time(v: string | undefined, field: string, fallback: number): number {
  if (v === undefined || v === "") return fallback;
  const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw queryError(field, `must be ms since epoch or an ISO-8601 time, got "${v}"`);
  return ms;
}

function queryError(field: string, what: string): DashboardError {
  return new DashboardError("TM_DASHBOARD_QUERY_INVALID", `query parameter "${field}" ${what}`);
}
