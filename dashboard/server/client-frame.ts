import { DashboardError } from "./errors.js";
import type { ClientFrame, MetricName, PanelSubscription, ResumeCursor } from "../protocol/ws-frames.js";

const METRICS: readonly MetricName[] = ["requests", "errorRate", "latency", "users", "sessions"];

/** Parses and checks a client frame; the error names the field and what to send instead. */
export function parseClientFrame(text: string): ClientFrame {
  let f: Record<string, unknown>;
  try {
    f = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return invalid("frame", "is not JSON");
  }
  if (typeof f !== "object" || f === null) return invalid("frame", "must be a JSON object");
  switch (f["type"]) {
    case "ping":
      return { type: "ping" };
    case "unsubscribe":
      if (!Array.isArray(f["panels"]) || !f["panels"].every((p) => typeof p === "string"))
        invalid("panels", "must be an array of panel ids");
      return { type: "unsubscribe", panels: f["panels"] as string[] };
    case "subscribe": {
      if (!Array.isArray(f["panels"])) invalid("panels", "must be an array of panel subscriptions");
      const panels = (f["panels"] as unknown[]).map((p, i) => panel(p, `panels[${i}]`));
      return f["since"] === undefined
        ? { type: "subscribe", panels }
        : { type: "subscribe", panels, since: cursor(f["since"]) };
    }
    default:
      return invalid("type", `must be "subscribe", "unsubscribe" or "ping", got ${JSON.stringify(f["type"])}`);
  }
}

function panel(v: unknown, at: string): PanelSubscription {
  const p = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
  const need = (k: string, ok: boolean, what: string): void => {
    if (!ok) invalid(`${at}.${k}`, what);
  };
  need("panel", typeof p["panel"] === "string" && p["panel"] !== "", "must be a non-empty panel id");
  need("metric", METRICS.includes(p["metric"] as MetricName), `must be one of ${METRICS.join(", ")}`);
  need("policy", typeof p["policy"] === "string" && p["policy"] !== "", "must be a policy name, e.g. dashboard");
  need(
    "windowMs",
    Number.isInteger(p["windowMs"]) && (p["windowMs"] as number) > 0,
    "must be the window size in ms, e.g. 60000",
  );
  need(
    "services",
    p["services"] === undefined || (Array.isArray(p["services"]) && p["services"].every((s) => typeof s === "string")),
    "must be an array of service names",
  );
  need(
    "route",
    p["route"] === undefined || typeof p["route"] === "string",
    "must be a route or left out for service-level panes",
  );
  need("from", p["from"] === undefined || Number.isFinite(p["from"]), "must be a time in ms since epoch");
  return p as unknown as PanelSubscription;
}

function cursor(v: unknown): ResumeCursor {
  const c = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
  if (typeof c["epoch"] !== "string" || !Number.isInteger(c["rev"]))
    invalid("since", 'must be {"epoch": string, "rev": integer} as received from the server');
  return c as unknown as ResumeCursor;
}

function invalid(field: string, what: string): never {
  throw new DashboardError("TM_DASHBOARD_FRAME_INVALID", `${field} ${what} (see docs/websocket-protocol.md)`);
}
