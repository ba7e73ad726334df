/** `GET /healthz` (process up), `GET /readyz` (NATS connected and TM_EVENTS present), `GET /metrics`. */
import type { FastifyInstance } from "fastify";
import type { IngestMetrics } from "../metrics.js";
import type { NatsLink } from "../nats/nats-link.js";

export function registerHealthRoutes(
  app: FastifyInstance,
  link: NatsLink,
  metrics: IngestMetrics,
  retryAfterS: number,
): void {
  app.get("/healthz", async () => ({ ok: true }));
  app.get("/readyz", async (_req, reply) => {
    if (link.ready) return { ready: true };
    return reply
      .code(503)
      .header("retry-after", String(retryAfterS))
      .send({ ready: false, nats: link.isConnected ? "connected, TM_EVENTS missing" : "disconnected" });
  });
  app.get("/metrics", async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
