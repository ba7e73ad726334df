/**
 * A worker's stage-1 output for the merge stage (docs/decisions/0029-two-stage-dataflow.md): the
 * PartialAccumulator fed the records and heartbeats the core gets, its batches published in order
 * to TM_PARTIALS (serial-publisher.ts) with the id `partial:<worker>:<from>`, so a replay after a
 * restore is deduplicated by the stream, and by the merge stage's aligner past the stream's window.
 * With several merge partitions each batch is cut by them (docs/decisions/0033-merge-partitions.md):
 * one on each `tm.partials.<m>`, id suffixed `:<m>` for m ≥ 1, each with the whole progress, and a
 * barrier goes to every merge partition; each subject has its own serial chain (the merge
 * operators read one subject each, so only a subject's order matters).
 */
import { headers } from "@nats-io/transport-node";
import { coreAggregates, partialSliceLengths } from "../../core/create-core.js";
import {
  type PartialAccumulatorOptions,
  type PartialAccumulatorState,
} from "../../core/partials/partial-accumulator.js";
import type { StreamCore } from "../../core/types.js";
import { CatchUpAccumulator } from "../../core/partials/catch-up-accumulator.js";
import {
  BARRIER_HEADER,
  encodePartialBatch,
  encodePartialRun,
  MAX_RUN_BATCHES,
  MAX_RUN_BYTES,
  PARTIAL_TICK_MS,
  partialsSubject,
  splitByMergePartition,
  type BarrierBody,
  type TelemetryEvent,
} from "../../protocol.js";
import type { EngineConfig } from "../config/config.js";
import type { AckedPublish } from "../../nats/inbox-acks.js";
import type { PublishStats } from "../output/pane-sink.js";
import { SerialPublisher, type JoinRule, type RetryReport } from "../output/serial-publisher.js";
import { epochMsgId } from "../output/epoch-output.js";

/**
 * Batches unacknowledged per merge partition at which the worker holds its input, as when its pane
 * sink is saturated (25 s of ticks); in bytes the bound is engine.maxInFlightBytes
 * (docs/decisions/0035-backpressure.md).
 */
export const MAX_QUEUED_PARTIALS = 256;

/**
 * Batches waiting behind the one in flight go out as one run (docs/decisions/0054-partial-runs.md),
 * its id the first batch's with `+<batches>`: a run holds what its first batch and count say (the
 * batches are a function of the log, ADR 0029), so one resent is the same run, and a run a replay
 * cuts otherwise is told from it and left to the merge stage's aligner.
 */
const PARTIAL_RUNS: JoinRule = {
  maxMessages: MAX_RUN_BATCHES,
  maxBytes: MAX_RUN_BYTES,
  join: (items) => ({
    body: encodePartialRun(items.map((it) => it.body)),
    msgID: `${(items[0] as { msgID: string }).msgID}+${items.length}`,
  }),
};

export class StageOnePartials {
  /** Batches published, one per merge partition per tick (tidemark_engine_partial_batches_total). */
  total = 0;
  private acc: CatchUpAccumulator;
  private readonly options: PartialAccumulatorOptions;
  /** One serial chain per merge partition: each subject in order, the subjects side by side. */
  private readonly out: SerialPublisher[];
  private readonly worker: string;
  private readonly partitions: number[];
  private readonly mergePartitions: number;
  private readonly limitBytes: number;

  constructor(
    config: EngineConfig,
    /** The worker's core (a restore replaces it): its delay quantiles go into each batch (percentile policies). */
    core: () => StreamCore,
    /** Where the batches go and their acks come from (InboxAcks; closed with this). */
    private readonly transport: AckedPublish & { close?(): void },
    onRetry: (r: RetryReport) => void,
    /** The worker's restore epoch (docs/decisions/0057-elastic-workers.md): in every batch and barrier when above 0. */
    private readonly epoch = 0,
  ) {
    const limits = { messages: MAX_QUEUED_PARTIALS, bytes: config.maxInFlightBytes };
    this.out = Array.from(
      { length: config.mergePartitions },
      () => new SerialPublisher(transport, { limits, onRetry, join: PARTIAL_RUNS }),
    );
    this.limitBytes = config.maxInFlightBytes;
    this.worker = config.worker;
    this.partitions = [...config.partitions];
    this.mergePartitions = config.mergePartitions;
    const options: PartialAccumulatorOptions = {
      worker: config.worker,
      partitions: config.partitions,
      tickMs: PARTIAL_TICK_MS,
      sliceMs: partialSliceLengths(config.core),
      kind: coreAggregates(config.core),
      relativeAccuracy: config.core.relativeAccuracy,
      serviceKeys: config.partitionBy === "service+route",
      delays: (lane: number) => core().delayQuantiles?.(lane),
      emit: (batch: Parameters<typeof encodePartialBatch>[0]) => {
        if (this.epoch > 0) batch.epoch = this.epoch;
        splitByMergePartition(batch, this.mergePartitions).forEach((b, m) => {
          this.total++;
          const id = epochMsgId(`partial:${b.worker}:${b.from}${suffix(m)}`, this.epoch);
          this.chain(m).publish(partialsSubject(m), encodePartialBatch(b), id);
        });
      },
    };
    this.options = options;
    this.acc = new CatchUpAccumulator(options);
  }

  /** Reopens the tick a checkpoint's `state()` kept, and any part still behind it (before any record). */
  restore(state: PartialAccumulatorState): void {
    this.acc = new CatchUpAccumulator(this.options, state);
  }

  /** A record released to the core (its `ingest_ts` the merged one). */
  event(lane: number, e: TelemetryEvent): void {
    this.acc.event(lane, e);
  }

  heartbeat(ts: number, lane: number): void {
    this.acc.heartbeat(ts, lane);
  }

  /**
   * Barrier n after every batch emitted so far (docs/decisions/0031-aligned-checkpoints.md): sent at
   * the worker's cut for checkpoint n, in order with the batches, so the merge operator knows which
   * of this worker's partials the checkpoint holds.
   */
  barrier(n: number): void {
    const body: BarrierBody = {
      worker: this.worker,
      partitions: this.partitions,
      n,
      ...(this.epoch > 0 ? { epoch: this.epoch } : {}),
    };
    const h = headers();
    h.set(BARRIER_HEADER, String(n));
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    for (let m = 0; m < this.mergePartitions; m++)
      this.chain(m).publish(partialsSubject(m), bytes, `barrier:${this.worker}:${n}${suffix(m)}`, h);
  }

  /** The open tick, for the checkpoint. */
  state(): PartialAccumulatorState {
    return this.acc.state();
  }

  /** True when so many batches wait for their ack that the worker should hold its input until `room()`. */
  get saturated(): boolean {
    return this.out.some((o) => o.saturated);
  }

  /** Resolves once every chain is under half of its bound. */
  room(): Promise<void> {
    return Promise.all(this.out.map((o) => o.room())).then(() => undefined);
  }

  /** Every chain's window summed (TM_PARTIALS in tidemark_engine_publish_*). */
  stats(): PublishStats {
    const sum = { inFlight: { messages: 0, bytes: 0 }, waiting: { messages: 0, bytes: 0 }, resends: 0 };
    for (const o of this.out) {
      const s = o.stats();
      sum.inFlight.messages += s.inFlight.messages;
      sum.inFlight.bytes += s.inFlight.bytes;
      sum.waiting.messages += s.waiting.messages;
      sum.waiting.bytes += s.waiting.bytes;
      sum.resends += s.resends;
    }
    const n = this.out.length;
    const limits = { messages: n * MAX_QUEUED_PARTIALS, bytes: n * this.limitBytes };
    return { ...sum, limits };
  }

  /** Resolves once every batch emitted so far is acknowledged. */
  flush(): Promise<void> {
    return Promise.all(this.out.map((o) => o.flush())).then(() => undefined);
  }

  close(): void {
    for (const o of this.out) o.close();
    this.transport.close?.();
  }

  private chain(m: number): SerialPublisher {
    return this.out[m] as SerialPublisher;
  }
}

/** The message id suffix of merge partition m (none for 0: one merge partition keeps the plain ids). */
function suffix(m: number): string {
  return m === 0 ? "" : `:${m}`;
}
