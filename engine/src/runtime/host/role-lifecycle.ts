/**
 * The steps around an OperatorHost that every role (engine worker, merge operator) takes alike:
 * following the NATS connection (the host's consumers are recreated on a reconnect), and the stop —
 * the side tasks stopped, the operator's final checkpoint (OperatorHost.close), a last status, then
 * NATS drained, bounded (with NATS down `drain()` would wait for ever), and the /metrics server
 * closed.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Server } from "node:http";
import type { Operator } from "./operator.js";
import type { OperatorHost } from "./operator-host.js";
import type { OperatorLog } from "../operator-log.js";

const DRAIN_MS = 3_000;

/** What the role's status publisher does around a stop and a reconnect. */
export interface RoleStatus {
  stop(): void;
  publish(): void;
  reconnected(): void;
}

/** Follows the connection until it closes: a disconnect waits, a reconnect recreates the consumers. */
export async function followConnection(
  nc: NatsConnection,
  host: OperatorHost<Operator>,
  status: RoleStatus,
  log: OperatorLog,
  waiting: string,
  consumers: string,
): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === "disconnect") {
      log.warn({ server: s.server }, `disconnected from NATS; ${waiting}`);
      host.connectionLost();
    } else if (s.type === "reconnect") {
      log.info({ server: s.server }, `reconnected to NATS; recreating ${consumers}`);
      host.connectionRestored();
      status.reconnected();
    }
  }
}

/** Stops a role: side tasks, the operator (final checkpoint), a last status, NATS and /metrics. */
export async function closeRole(
  host: OperatorHost<Operator>,
  tasks: ReadonlyArray<{ stop(): void }>,
  status: RoleStatus,
  nc: NatsConnection,
  metricsServer: Server,
  log: OperatorLog & { flush?(): void },
  role: "engine" | "merge",
): Promise<void> {
  for (const t of tasks) t.stop();
  await host.close();
  status.publish();
  await closeConnections(nc, metricsServer);
  log.info({ events: host.eventsTotal }, `${role} stopped`);
  log.flush?.();
}

async function closeConnections(nc: NatsConnection, metricsServer: Server): Promise<void> {
  const drained = nc.drain().catch(() => undefined);
  await Promise.race([drained, new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
  if (!nc.isClosed()) await nc.close().catch(() => undefined);
  await new Promise<void>((r) => metricsServer.close(() => r()));
}
