/**
 * The NATS side of aligned checkpoints (docs/decisions/0031-aligned-checkpoints.md) for every
 * operator: following the coordinator's start notices, acknowledging a checkpoint n, and the
 * newest completed checkpoint, where recovery starts.
 */
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  checkpointAckSubject,
  STREAM_CHECKPOINTS,
  SUBJECT_CHECKPOINT_COMPLETE,
  SUBJECT_CHECKPOINT_START,
  type CheckpointAck,
  type CheckpointComplete,
  type CheckpointStart,
} from "../../protocol.js";
import type { OperatorLog } from "../operator-log.js";

/** Calls `on` for each start notice (core subscription: a notice missed while away is the next one's). */
export function followStarts(nc: NatsConnection, on: (s: CheckpointStart) => void, log: OperatorLog): Subscription {
  return nc.subscribe(SUBJECT_CHECKPOINT_START, {
    callback: (_err, m) => {
      const s = parseJson<CheckpointStart>(m.string());
      if (s && Number.isSafeInteger(s.n) && Number.isFinite(s.startedAt)) on(s);
      else log.warn({ body: m.string().slice(0, 200) }, "checkpoint start notice not understood; ignored");
    },
  });
}

/** Stores the acknowledgement of checkpoint n on TM_CHECKPOINTS (logged when it cannot: the coordinator then times n out). */
export function publishAck(nc: NatsConnection, ack: CheckpointAck, log: OperatorLog): void {
  jetstream(nc)
    .publish(checkpointAckSubject(ack.operator), JSON.stringify(ack), { msgID: `ack:${ack.operator}:${ack.n}` })
    .catch((err: Error) => log.warn({ n: ack.n, err: err.message }, "checkpoint acknowledgement not stored"));
}

/** The newest completed checkpoint, or null (none yet, or no TM_CHECKPOINTS). */
export async function lastComplete(nc: NatsConnection): Promise<CheckpointComplete | null> {
  try {
    const jsm = await jetstreamManager(nc);
    const m = await jsm.streams.getMessage(STREAM_CHECKPOINTS, { last_by_subj: SUBJECT_CHECKPOINT_COMPLETE });
    return m ? parseJson<CheckpointComplete>(m.string()) : null;
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound) return null;
    throw err;
  }
}

function parseJson<T>(text: string): T | null {
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}
