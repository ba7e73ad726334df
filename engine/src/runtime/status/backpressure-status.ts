/**
 * The `backpressure` block of an operator's `tm.status` (protocol.ts, BackpressureStatus;
 * docs/decisions/0035-backpressure.md): the hold in progress, the total held, the aligned
 * checkpoint waiting for its acks, and each output stream's window.
 *
 * Pure: reads what it is given.
 */
import type { BackpressureStatus } from "../../protocol.js";
import type { InputHold } from "../output/input-hold.js";
import type { PublishStats } from "../output/pane-sink.js";

/** What an operator (EngineWorker, MergeOperator) tells of its backpressure. */
export interface BackpressureSource {
  readonly gate: { readonly hold: InputHold };
  publishStats(): Array<{ stream: string; stats: PublishStats }>;
  checkpointWaiting(): { n: number; waitedMs: number } | null;
}

export function backpressureStatus(op: BackpressureSource): BackpressureStatus {
  const hold = op.gate.hold;
  const now = hold.current();
  const streams: BackpressureStatus["streams"] = {};
  for (const { stream, stats } of op.publishStats())
    streams[stream] = {
      inFlight: stats.inFlight.messages,
      inFlightBytes: stats.inFlight.bytes,
      waiting: stats.waiting.messages,
      waitingBytes: stats.waiting.bytes,
      limitBytes: stats.limits.bytes,
      resends: stats.resends,
    };
  return {
    heldBy: now?.cause ?? null,
    heldMs: now?.heldMs ?? 0,
    heldTotalMs: hold.totalMs(),
    checkpointWaiting: op.checkpointWaiting(),
    streams,
  };
}
