/**
 * The first steps every role (engine worker, merge operator) takes alike (docs/operations.md,
 * "Recovery"): connect to NATS and check the streams (engine-connect.ts), find the newest completed
 * aligned checkpoint (docs/decisions/0031-aligned-checkpoints.md), and restore the operator's newest
 * valid checkpoint, preferring its file of that completed one. On a failure the connection is
 * closed before the error goes on.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { lastComplete } from "../checkpoint/checkpoint-notices.js";
import { restoreEngine, type CoreFactory, type RestoredEngine } from "../checkpoint/engine-restore.js";
import type { EngineConfig } from "../config/config.js";
import { connectEngine } from "./engine-connect.js";

export interface StartedRole extends RestoredEngine {
  nc: NatsConnection;
}

export async function connectAndRestore(
  config: EngineConfig,
  cores: CoreFactory | undefined,
  log: Logger,
): Promise<StartedRole> {
  const nc = await connectEngine(config);
  try {
    const complete = await lastComplete(nc);
    return { nc, ...(await restoreEngine(config, cores, log, complete?.operators[config.worker])) };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
