/**
 * An operator's input as the OperatorHost runs it (docs/decisions/0045-operator-host.md, decision 5):
 * the host starts it, pulls bounded batches from it between checkpoints and while its outputs have
 * room, hands each to the operator, lets held consumers read on after a slice, recreates its
 * consumers after a reconnect and stops it. A worker's input is its owned TM_EVENTS partitions in
 * interleaved order (input/partition-input.ts); a merge operator's, its TM_PARTIALS subject
 * (input/partials-input.ts).
 */
export interface InputSource<B> {
  /** Starts reading; `ready` is called whenever a batch may be pulled. */
  start(ready: () => void): void;
  /** The next batch of at most `max` items, or null when nothing is ready. */
  pull(max: number): B | null;
  /** After a slice of batches: consumers held by the input's bound may read on. */
  release(): void;
  /** Back on NATS: every consumer is recreated from its last sequence + 1. */
  restart(): void;
  /** Stops reading (consumers held by the bound are let go first, or they could not see the stop). */
  stop(): Promise<void>;
}
