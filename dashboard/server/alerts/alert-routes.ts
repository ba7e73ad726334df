import type { FastifyInstance } from "fastify";
import type { Alerting } from "./alerting.js";

/** `GET /api/alerts`: the active alerts and the recent history (docs/websocket-protocol.md, "Alerts"). */
export function alertRoutes(app: FastifyInstance, alerting: Pick<Alerting, "view">): void {
  app.get("/api/alerts", async () => alerting.view());
}
