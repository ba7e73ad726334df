/**
 * Notices of a checkpoint held by backpressure (docs/decisions/0035-backpressure.md, "Aligned
 * checkpoints"). An operator whose aligned checkpoint n is cut but not yet durable — its publishes
 * before the cut still unacknowledged — says so every WAIT_NOTICE_MS (at most a quarter of the
 * checkpoint timeout) on core NATS
 * (`tm.checkpoint-waiting.<operator>`); the coordinator takes each notice as progress and does not
 * abort n while they come. A stopped operator sends none, and n is aborted as before.
 */
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { checkpointWaitingSubject, type CheckpointWaiting } from "../../protocol.js";
import type { OperatorLog } from "../operator-log.js";

export const WAIT_NOTICE_MS = 5_000;

/** Publishes a notice every period while `waiting()` names a checkpoint waiting that long. */
export function announceWaits(
  nc: NatsConnection,
  operator: string,
  timeoutMs: number,
  waiting: () => { n: number; waitedMs: number } | null,
  log: OperatorLog,
): { stop(): void } {
  const every = Math.min(WAIT_NOTICE_MS, timeoutMs / 4);
  const timer = setInterval(() => {
    const w = waiting();
    if (w === null || w.waitedMs < every || nc.isClosed()) return;
    const notice: CheckpointWaiting = { operator, n: w.n, waitedMs: w.waitedMs };
    try {
      nc.publish(checkpointWaitingSubject(operator), JSON.stringify(notice));
    } catch (err) {
      log.warn({ n: w.n, err: (err as Error).message }, "checkpoint waiting notice not sent");
    }
  }, every);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Calls `on` for every operator's waiting notice. */
export function followWaits(nc: NatsConnection, on: (w: CheckpointWaiting) => void): Subscription {
  return nc.subscribe(checkpointWaitingSubject("*"), {
    callback: (_err, m) => {
      try {
        const w = JSON.parse(m.string()) as CheckpointWaiting;
        if (Number.isSafeInteger(w.n) && typeof w.operator === "string") on(w);
      } catch {
        // not a notice: ignored (it only ever delays an abort)
      }
    },
  });
}
