/**
 * LaneIntake: the bound on a worker's input between its consumers and the core
 * (docs/decisions/0035-backpressure.md, "Input"). The consumer of an owned partition is held while
 * its lane of the interleave has MAX_QUEUED_MESSAGES messages or `maxEvents` events queued (decoded
 * events are most of what the input holds in memory), and reads on once the lane is under half of
 * both. A message is always taken before the check, so a lane holds at least one however large it
 * is, and a lane the interleave waits on is never held: the bound cannot deadlock the interleave.
 */
import type { PartitionInterleave } from "./partition-interleave.js";

/** Messages queued per partition before its consumer is held. */
export const MAX_QUEUED_MESSAGES = 64;

export class LaneIntake {
  private readonly waiters: Array<(() => void) | undefined>;

  constructor(
    private readonly interleave: Pick<PartitionInterleave, "queued" | "queuedEvents">,
    lanes: number,
    private readonly maxEvents: number,
  ) {
    this.waiters = new Array<(() => void) | undefined>(lanes).fill(undefined);
  }

  /** A promise for the consumer of `lane` to wait on before reading further, or undefined. */
  backpressure(lane: number): Promise<void> | undefined {
    if (this.interleave.queued(lane) < MAX_QUEUED_MESSAGES && this.interleave.queuedEvents(lane) < this.maxEvents)
      return undefined;
    return new Promise((resolve) => (this.waiters[lane] = resolve));
  }

  /** After the interleave released items: the consumers of lanes under half of their bounds read on. */
  release(): void {
    for (let lane = 0; lane < this.waiters.length; lane++) {
      const w = this.waiters[lane];
      if (w === undefined) continue;
      if (
        this.interleave.queued(lane) >= MAX_QUEUED_MESSAGES / 2 ||
        this.interleave.queuedEvents(lane) >= this.maxEvents / 2
      )
        continue;
      this.waiters[lane] = undefined;
      w();
    }
  }

  /** Every held consumer reads on (the worker is stopping: they must see the stop). */
  releaseAll(): void {
    this.waiters.forEach((w, lane) => {
      this.waiters[lane] = undefined;
      w?.();
    });
  }
}
