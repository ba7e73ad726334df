/**
 * What a restore epoch changes in an operator's output (docs/decisions/0057-elastic-workers.md):
 * after a restore from a savepoint the dataflow runs again from the savepoint's cut, and what the
 * roles of the older epoch published past it stays in the streams. So the new epoch's output must
 * win everywhere it meets the old: its message ids carry the epoch (the streams' deduplication
 * would otherwise drop a new message under an old id), and its panes' seqs are raised by
 * EPOCH_SEQ_STRIDE per epoch, so every consumer keeping each pane id's highest seq (the dashboard,
 * the Prometheus API, the rules, remote-write) takes the new epoch's. Epoch 0 changes nothing.
 */
import type { Pane } from "../../protocol.js";

/** Seqs one epoch's panes of an id are raised by, per epoch (far above any id's pane count). */
export const EPOCH_SEQ_STRIDE = 2 ** 24;

/** The pane as the epoch publishes it (its seq raised in place: each pane is the core's fresh object). */
export function epochPane(p: Pane, epoch: number): Pane {
  if (epoch > 0) p.seq += epoch * EPOCH_SEQ_STRIDE;
  return p;
}

/** A message id as the epoch publishes it. */
export function epochMsgId(id: string, epoch: number): string {
  return epoch > 0 ? `${id}~e${epoch}` : id;
}
