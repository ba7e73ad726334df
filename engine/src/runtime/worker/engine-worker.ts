/**
 * EngineWorker: drives the pure core from the owned partitions of TM_EVENTS (docs/operations.md,
 * "Engine workers"). Sources push messages into the PartitionMerge; a pump releases them to the
 * core in merged order in bounded slices (yielding to I/O between slices); what the core emits
 * for the items of one input message goes to the PaneSink as one message per subject (an
 * EmitGroup per lane, emit-group.ts, docs/decisions/0012-batched-transport.md); checkpoints are cut
 * between two items and written once the panes published before the cut are acknowledged
 * (worker-checkpoints.ts). The worker judges no idleness: the core does, in log time, from what the merge
 * releases (docs/semantics.md, "Watermarks"), so a replay sees exactly what the first run saw.
 * Beside the core, StageOnePartials folds the same records into partial batches for the merge stage
 * (docs/decisions/0029-two-stage-dataflow.md), acknowledged, as the panes, before a checkpoint,
 * which keeps their open tick.
 *
 * Backpressure (docs/decisions/0035-backpressure.md): while a publisher is saturated the OutputGate
 * is shut and the pump releases nothing (the consumers then stop pulling, LaneIntake); each
 * partition's queue in the merge is bounded in messages and events.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { snapshotStepsOf } from "../../core/snapshot/snapshot-steps.js";
import type { CoreOutput, StreamCore } from "../../core/types.js";
import type { Pane, TelemetryEvent } from "../../protocol.js";
import type { CheckpointHeader } from "../checkpoint/checkpoint-codec.js";
import { pooledBodySender } from "../output/body-sender.js";
import { LaneGroups } from "../output/lane-groups.js";
import { LaneIntake } from "../input/lane-intake.js";
import { OutputGate } from "../output/output-gate.js";
import type { PublishStats } from "../output/pane-sink.js";
import { PipelineLag } from "../status/pipeline-lag.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { EngineConfig } from "../config/config.js";
import { PartitionMerge, type MergeSink } from "../input/partition-merge.js";
import { PartitionSource } from "../input/partition-source.js";
import { StageOnePartials } from "./stage-one-partials.js";
import { WorkerCheckpoints, type CheckpointSubject } from "../checkpoint/worker-checkpoints.js";

export type { CheckpointEvent } from "../checkpoint/worker-checkpoints.js";

/** Items released per pump slice before yielding to the event loop, in chunks of CHUNK. */
const SLICE = 4096;
const CHUNK = 128;

export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What the worker needs of a pane sink (PaneSink, PaneThreadSink). */
export interface EngineSink {
  publish(subject: string, body: Uint8Array, msgId: string): void;
  readonly saturated: boolean;
  readonly inFlight: number;
  readonly acked: number;
  /** Its window, for tidemark_engine_publish_* and tm.status (docs/decisions/0035-backpressure.md). */
  stats(): PublishStats;
  /** Set by the worker: where the buffers of acknowledged bodies go (BodyBuffers). */
  onReturned: (buffer: ArrayBuffer) => void;
  room(): Promise<void>;
  flush(): Promise<void>;
  close(): void;
}

export class EngineWorker {
  readonly merge: PartitionMerge;
  readonly sink: EngineSink;
  eventsTotal = 0;
  lateRecords = 0;
  /** Wall clock − log time as events are handled (tidemark_engine_pipeline_lag_seconds, tm.status). */
  readonly pipelineLag = new PipelineLag();
  readonly panesEmitted = new Map<string, Map<string, number>>();
  /** When and how it checkpoints (onCheckpoint, onBarrierCheckpoint, lastCheckpointWall). */
  readonly checkpoints: WorkerCheckpoints;

  /** Shut while a publisher is saturated: the input is held (docs/decisions/0035-backpressure.md). */
  readonly gate: OutputGate;
  private readonly sources: PartitionSource[] = [];
  private readonly intake: LaneIntake;
  /** From a checkpoint's cut until its snapshot is encoded: the pump releases nothing meanwhile. */
  private holding = false;
  private scheduled = false;
  private closing = false;
  private connectionDown = false;
  private readonly groups: LaneGroups;
  private readonly out: CoreOutput;
  private readonly mergeSink: MergeSink;
  /** Stage-1 partials (null when `partials` is off). */
  private readonly partials: StageOnePartials | null;

  constructor(
    private readonly config: EngineConfig,
    private readonly core: StreamCore,
    store: CheckpointStore,
    private readonly js: JetStreamClient,
    /** Where the pane and late batches go: the pane publisher thread (PaneThreadSink) or a PaneSink here. */
    sink: EngineSink,
    private readonly log: WorkerLog,
    /** The checkpoint restored from: offsets, log time and the groups it carried. */
    restored: CheckpointHeader | undefined,
  ) {
    const lanes = config.partitions.length;
    this.merge = new PartitionMerge(lanes, restored?.offsets);
    this.intake = new LaneIntake(this.merge, lanes, config.maxQueuedEvents);
    // Bodies gzip-compressed on the thread pool, when compressed (docs/decisions/0047-binary-panes.md).
    const sender = pooledBodySender(sink, config.compressPanes);
    this.sink = sender.sink;
    this.groups = new LaneGroups(config.partitions, sender.send, Date.now, restored?.pending, sender.buffers);
    // Partitioned by service and route, a service's panes from one worker are partial: the merge
    // stage makes them from every worker's partials (docs/decisions/0032-partition-by-route.md).
    const serviceLevel = config.partitionBy === "service";
    this.out = {
      pane: (p) => {
        if (!serviceLevel && p.key.route === undefined) return;
        this.countPane(p);
        this.groups.pane(p);
      },
      late: (r) => {
        this.lateRecords++;
        this.groups.late(r);
      },
    };
    const onPartialRetry = (r: object): void =>
      log.warn(r, "partial batch not acknowledged; sending it again with the same message id");
    this.partials = config.partials ? new StageOnePartials(config, core, js, onPartialRetry, restored?.partials) : null;
    const partials = this.partials;
    const outputs = [
      { cause: "TM_PANES" as const, out: this.sink },
      { cause: "TM_PARTIALS" as const, out: partials },
    ];
    this.gate = new OutputGate(outputs, Date.now, () => this.wake());
    this.mergeSink = {
      event: (lane: number, e: TelemetryEvent, seq: number) => {
        this.groups.at(lane, seq);
        this.eventsTotal++;
        partials?.event(lane, e);
        this.core.event(lane, e, this.out);
      },
      heartbeat: (lane: number, ts: number, seq: number) => {
        this.groups.at(lane, seq);
        partials?.heartbeat(ts);
        this.core.heartbeat(lane, ts, this.out);
      },
      done: (lane: number, seq: number) => this.groups.done(lane, seq),
    };
    this.checkpoints = new WorkerCheckpoints(config, store, this.checkpointSubject(), log, restored?.logTime);
  }

  /** Stage-1 partial batches published (0 when `partials` is off). */
  get partialsTotal(): number {
    return this.partials?.total ?? 0;
  }

  /** Each output stream's window (tidemark_engine_publish_*, tm.status `backpressure`). */
  publishStats(): Array<{ stream: string; stats: PublishStats }> {
    const out = [{ stream: "TM_PANES", stats: this.sink.stats() }];
    if (this.partials) out.push({ stream: "TM_PARTIALS", stats: this.partials.stats() });
    return out;
  }

  /**
   * The coordinator starts checkpoint n (docs/decisions/0031-aligned-checkpoints.md): the worker
   * cuts at its next point between two items and sends barrier n after its partials. A worker
   * without partials takes no part.
   */
  requestBarrier(n: number, startedAt: number): void {
    if (this.partials === null || this.closing) return;
    this.checkpoints.request(n, startedAt);
    this.wake();
  }

  /** The aligned checkpoint cut here and not yet durable, with how long it has waited (null: none). */
  checkpointWaiting(): { n: number; waitedMs: number } | null {
    return this.checkpoints.waiting();
  }

  /** Starts one consumer per owned partition. */
  start(): void {
    const offsets = this.merge.offsets();
    this.config.partitions.forEach((partition, lane) => {
      const source = new PartitionSource(this.js, partition, offsets[lane]?.lastSeq ?? 0, {
        message: (seq, events, hb) => this.onMessage(lane, seq, events, hb),
        backpressure: () => this.backpressure(lane),
        problem: (what, err) => this.log.warn({ partition, err: err instanceof Error ? err.message : err }, what),
      });
      this.sources.push(source);
      source.start();
    });
  }

  /** Stops reading, writes a final checkpoint (after the pending panes are acknowledged). */
  async close(flushTimeoutMs = 5_000): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // Release consumers paused by backpressure first, or they could not see the stop.
    this.intake.releaseAll();
    await Promise.all(this.sources.map((s) => s.stop()));
    // One deadline for everything that waits on acks: a checkpoint in progress waits for its panes'
    // acks too, and with TM_PANES unreachable they never come (docs/operations.md, "Engine workers").
    const deadline = new Promise<false>((r) => setTimeout(() => r(false), flushTimeoutMs).unref());
    if (!(await this.checkpoints.final(deadline)))
      this.log.warn({}, "pending panes were not acknowledged in time: no final checkpoint (the log replays them)");
    this.sink.close();
    this.partials?.close();
  }

  /**
   * The connection to NATS dropped. Nothing to do until it returns: the merge waits for the
   * silent partitions (docs/operations.md, "Recovery"), and the log time stands still meanwhile.
   */
  connectionLost(): void {
    this.connectionDown = true;
  }

  /** Back online: recreate every consumer at once from its last sequence + 1. */
  connectionRestored(): void {
    this.connectionDown = false;
    for (const s of this.sources) s.restart();
  }

  /** True between `connectionLost()` and `connectionRestored()`. */
  get disconnected(): boolean {
    return this.connectionDown;
  }

  private onMessage(lane: number, seq: number, events: TelemetryEvent[] | null, hb: number): void {
    this.merge.push(lane, seq, events, hb);
    this.wake();
  }

  private backpressure(lane: number): Promise<void> | undefined {
    return this.closing ? undefined : this.intake.backpressure(lane);
  }

  private wake(): void {
    if (this.scheduled || this.closing) return;
    this.scheduled = true;
    setImmediate(() => this.pump());
  }

  private pump(): void {
    this.scheduled = false;
    if (this.closing || this.holding) return;
    if (this.gate.blocked()) {
      // Held input: nothing released, but a checkpoint asked for is cut all the same (its barrier
      // goes in order after the partials before it), and waits for its acks like any other.
      this.checkpoints.maybe();
      return;
    }
    // Small chunks, so the sinks' windows stay full and little waits past them (one chunk's output at most).
    let n = 0;
    let more = true;
    while (more && n < SLICE && !this.sink.saturated && this.partials?.saturated !== true) {
      const before = this.eventsTotal;
      const k = this.merge.drain(this.mergeSink, CHUNK);
      // Per event: a heartbeat waits for the next item of the partitions before it (the merge's
      // tie rule), which says nothing about how fresh the panes are (pipeline-lag.ts).
      const events = this.eventsTotal - before;
      if (events > 0) this.pipelineLag.observe(Date.now(), this.merge.logTime as number, events);
      n += k;
      more = k === CHUNK;
    }
    this.checkpoints.maybe();
    this.intake.release();
    if (more) this.wake();
  }

  /** Resolves once the panes and partials published so far are acknowledged. */
  private flushOutput(): Promise<void> {
    return Promise.all([this.sink.flush(), this.partials?.flush()]).then(() => undefined);
  }

  private countPane(p: Pane): void {
    let kinds = this.panesEmitted.get(p.policy);
    if (!kinds) this.panesEmitted.set(p.policy, (kinds = new Map()));
    kinds.set(p.kind, (kinds.get(p.kind) ?? 0) + 1);
  }

  /** What the checkpoints take from the worker (worker-checkpoints.ts). */
  private checkpointSubject(): CheckpointSubject {
    return {
      logTime: () => this.merge.logTime,
      state: () => {
        const open = this.groups.pending();
        return {
          offsets: this.merge.offsets(),
          // Absent when none, so the file stays version 1.
          ...(open.length > 0 ? { pending: open } : {}),
          ...(this.partials ? { partials: this.partials.state() } : {}),
        };
      },
      snapshot: () => snapshotStepsOf(this.core),
      barrier: (n) => this.partials?.barrier(n),
      flushOutput: () => this.flushOutput(),
      hold: (held) => {
        this.holding = held;
        if (!held) this.wake();
      },
      wake: () => this.wake(),
    };
  }
}
