/**
 * PartitionInput: an engine worker's input (docs/decisions/0006-engine-runtime.md) as an
 * InputSource of the OperatorHost (host/input-source.ts): one PartitionSource per owned partition
 * of TM_EVENTS, from its checkpointed sequence + 1, pushing into the PartitionInterleave; a batch is
 * a bounded drain of the interleave (nothing allocated per item: the worker drains it into its own
 * sink); LaneIntake bounds what waits in the interleave (docs/decisions/0035-backpressure.md).
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { LaneIntake } from "./lane-intake.js";
import type { InterleaveSink, PartitionInterleave } from "./partition-interleave.js";
import { PartitionSource } from "./partition-source.js";

/** Up to `max` items of the interleave, released into `sink` by `drain` (returns how many). */
export interface InterleaveBatch {
  max: number;
  drain(sink: InterleaveSink): number;
}

export class PartitionInput {
  private readonly sources: PartitionSource[] = [];
  private readonly intake: LaneIntake;
  private closing = false;
  private readonly batch: InterleaveBatch;

  constructor(
    private readonly js: JetStreamClient,
    private readonly partitions: readonly number[],
    private readonly interleave: PartitionInterleave,
    maxQueuedEvents: number,
    private readonly problem: (partition: number, what: string, err: unknown) => void,
  ) {
    this.intake = new LaneIntake(interleave, partitions.length, maxQueuedEvents);
    const batch: InterleaveBatch = { max: 0, drain: (sink) => interleave.drain(sink, batch.max) };
    this.batch = batch;
  }

  /** Starts one consumer per owned partition. */
  start(ready: () => void): void {
    const offsets = this.interleave.offsets();
    this.partitions.forEach((partition, lane) => {
      const source = new PartitionSource(this.js, partition, offsets[lane]?.lastSeq ?? 0, {
        message: (seq, events, hb) => {
          this.interleave.push(lane, seq, events, hb);
          ready();
        },
        backpressure: () => (this.closing ? undefined : this.intake.backpressure(lane)),
        problem: (what, err) => this.problem(partition, what, err),
      });
      this.sources.push(source);
      source.start();
    });
  }

  pull(max: number): InterleaveBatch {
    this.batch.max = max;
    return this.batch;
  }

  release(): void {
    this.intake.release();
  }

  /** Back online: recreate every consumer at once from its last sequence + 1. */
  restart(): void {
    for (const s of this.sources) s.restart();
  }

  async stop(): Promise<void> {
    this.closing = true;
    // Release consumers paused by backpressure first, or they could not see the stop.
    this.intake.releaseAll();
    await Promise.all(this.sources.map((s) => s.stop()));
  }
}
