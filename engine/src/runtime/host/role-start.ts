/**
 * The first steps every role (engine worker, merge operator) takes alike (docs/operations.md,
 * "Recovery"): connect to NATS and check the streams (engine-connect.ts), find the newest completed
 * aligned checkpoint (docs/decisions/0031-aligned-checkpoints.md), and take the restore step
 * (checkpoint/restore-plan.ts): the operator's newest valid checkpoint, preferring its file of that
 * completed one, read with its StateFrame. On a failure the connection is closed before the error
 * goes on. Snapshot checksums are node:zlib's from here on (checkpoint/native-crc32.ts).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { lastComplete } from "../checkpoint/checkpoint-notices.js";
import { useNativeCrc32 } from "../checkpoint/native-crc32.js";
import { planRestore, type CoreFactory, type CutPlanner, type RestorePlan } from "../checkpoint/restore-plan.js";
import type { StateFrame } from "../checkpoint/state-frames.js";
import type { EngineConfig } from "../config/config.js";
import { connectEngine } from "./engine-connect.js";

export interface StartedRole<S> extends RestorePlan<S> {
  nc: NatsConnection;
}

export async function connectAndRestore<S>(
  config: EngineConfig,
  cores: CoreFactory | undefined,
  frame: StateFrame<S>,
  log: Logger,
  /** The role's choice of cut (checkpoint/worker-cut.ts, checkpoint/merge-cut.ts). */
  planCut?: CutPlanner<S>,
): Promise<StartedRole<S>> {
  useNativeCrc32();
  const nc = await connectEngine(config);
  try {
    const complete = await lastComplete(nc);
    return {
      nc,
      ...(await planRestore(
        config,
        cores,
        frame,
        log,
        complete ? { n: complete.n, file: complete.operators[config.worker] } : undefined,
        planCut,
      )),
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
