/**
 * The steps around an OperatorHost that every role (engine worker, merge operator) takes alike:
 * running it (status, host, connection, the start logged without the URL's credentials), what a
 * running role shows, following the NATS connection (the host's consumers are recreated on a
 * reconnect), and the stop —
 * the side tasks stopped, the operator's final checkpoint (OperatorHost.close), a last status, then
 * NATS drained, bounded (with NATS down `drain()` would wait for ever), and the /metrics server
 * closed.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Server } from "node:http";
import { redactUrl } from "../../nats/connect-options.js";
import type { Operator } from "./operator.js";
import type { OperatorHost } from "./operator-host.js";
import type { OperatorLog } from "../operator-log.js";
import type { RestoredCut } from "../checkpoint/checkpoint-store.js";

const DRAIN_MS = 3_000;

/** What the role's status publisher does around a stop and a reconnect. */
export interface RoleStatus {
  stop(): void;
  publish(): void;
  reconnected(): void;
}

/** What every running role shows (RunningEngine, RunningMerge). */
export interface RunningRole {
  readonly worker: string;
  readonly metricsUrl: string;
  /** The checkpoint the role resumed from, if any. */
  readonly restoredFrom: string | undefined;
  /** Corrupt checkpoint files skipped at start. */
  readonly skippedCheckpoints: ReadonlyArray<{ file: string; reason: string }>;
  /** The cut it restored when other operators wrote its state (docs/decisions/0057-elastic-workers.md), else null. */
  readonly restoredCut: RestoredCut | null;
  /** Its restore epoch. */
  readonly epoch: number;
  close(): Promise<void>;
}

/** A role to run: its identity, config, restore and /metrics, and what its log lines say. */
export interface RoleRun {
  role: "engine" | "merge";
  config: { worker: string; natsUrl: string; metricsHost: string };
  loaded: { file: string | undefined; skipped: ReadonlyArray<{ file: string; reason: string }>; cut?: RestoredCut };
  epoch: number;
  served: { server: Server; port: number };
  /** Side tasks, stopped first on close (the checkpoint waits' notices, the coordinator, the status). */
  tasks: ReadonlyArray<{ stop(): void }>;
  /** What the disconnect line says waits, what the reconnect recreates, and the start line's fields. */
  words: { waiting: string; consumers: string; fields: object };
}

/**
 * The last steps of a role's start: its status published, the host started, the connection
 * followed, and the start logged (credentials in the NATS URL are never logged: docs/security.md);
 * `close()` stops it once (closeRole).
 */
export function runRole(
  run: RoleRun,
  nc: NatsConnection,
  host: OperatorHost<Operator>,
  status: RoleStatus & { start(): void },
  log: OperatorLog & { flush?(): void },
): RunningRole {
  status.start();
  host.start();
  void followConnection(nc, host, status, log, run.words.waiting, run.words.consumers);
  const port = run.served.port;
  log.info({ ...run.words.fields, metrics: port, nats: redactUrl(run.config.natsUrl) }, `${run.role} started`);
  let closing: Promise<void> | undefined;
  return {
    worker: run.config.worker,
    metricsUrl: `http://${run.config.metricsHost}:${port}/metrics`,
    restoredFrom: run.loaded.file,
    skippedCheckpoints: run.loaded.skipped,
    restoredCut: run.loaded.cut ?? null,
    epoch: run.epoch,
    close: () => (closing ??= closeRole(host, run.tasks, status, nc, run.served.server, log, run.role)),
  };
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
