/**
 * The last step of stopping a role (engine worker, merge operator) once its operator has written
 * its final checkpoint: drain the NATS connection, bounded (with NATS down `drain()` would wait
 * for ever), close it, and close the /metrics server.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Server } from "node:http";

const DRAIN_MS = 3_000;

export async function closeConnections(nc: NatsConnection, metricsServer: Server): Promise<void> {
  const drained = nc.drain().catch(() => undefined);
  await Promise.race([drained, new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
  if (!nc.isClosed()) await nc.close().catch(() => undefined);
  await new Promise<void>((r) => metricsServer.close(() => r()));
}
