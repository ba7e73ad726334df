/**
 * EngineWorker: the operator that drives the pure core from the owned partitions of TM_EVENTS
 * (docs/operations.md, "Engine workers"), run by an OperatorHost (host/operator-host.ts), which
 * owns its input loop, the cut of its checkpoints, its output, gate, counts and stop. Its input
 * (input/partition-input.ts) pushes messages into the PartitionInterleave; each batch the host
 * pulls is a bounded drain of it into the core, in interleaved order; what the core emits for the
 * items of one input message goes to the PaneSink as one message per subject (an EmitGroup per
 * lane, emit-group.ts, docs/decisions/0012-batched-transport.md). When it checkpoints is its
 * WorkerTrigger's (checkpoint/worker-trigger.ts); the host cuts between two batches and writes once
 * the panes published before the cut are acknowledged. The worker judges no idleness: the core does, in log time, from what the interleave
 * releases (docs/semantics.md, "Watermarks"), so a replay sees exactly what the first run saw.
 * Beside the core, StageOnePartials folds the same records into partial batches for the merge stage
 * (docs/decisions/0029-two-stage-dataflow.md), acknowledged, as the panes, before a checkpoint,
 * which keeps their open tick. Its checkpointed state is a WorkerState (checkpoint/worker-state.ts):
 * `handleCheckpoint` takes it with the core's snapshot, `restore` — called by the host before the
 * input starts — puts the same value back (the interleave's offsets, the open groups, the partials'
 * tick) and drives the core made from that snapshot instead of the fresh one it was built with.
 *
 * Backpressure (docs/decisions/0035-backpressure.md): while a publisher is saturated the host's
 * OutputGate is shut and the host pulls nothing (the consumers then stop pulling, LaneIntake); each
 * partition's queue in the interleave is bounded in messages and events.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { snapshotStepsOf } from "../../core/snapshot/snapshot-steps.js";
import { GroupedCore } from "../../core/grouped/index.js";
import { epochPane } from "../output/epoch-output.js";
import type { CoreOutput, StreamCore } from "../../core/types.js";
import type { CoreFactory } from "../checkpoint/restore-plan.js";
import type { TelemetryEvent } from "../../protocol.js";
import { LaneGroups } from "../output/lane-groups.js";
import type { EngineConfig } from "../config/config.js";
import type { HostContext, Operator, OperatorCheckpoint, OperatorOutput } from "../host/operator.js";
import { PartitionInterleave, type InterleaveSink } from "../input/partition-interleave.js";
import { PartitionInput, type InterleaveBatch } from "../input/partition-input.js";
import type { AckedPublish } from "../../nats/inbox-acks.js";
import { StageOnePartials } from "./stage-one-partials.js";
import { WorkerTrigger } from "../checkpoint/worker-trigger.js";
import type { WorkerState } from "../checkpoint/worker-state.js";
import { workerStateFrame, type Restored } from "../checkpoint/state-frames.js";

export class EngineWorker implements Operator<InterleaveBatch, WorkerState> {
  readonly operatorId: string;
  readonly interleave: PartitionInterleave;
  readonly outputs: readonly OperatorOutput[];
  eventsTotal = 0;
  lateRecords = 0;
  readonly input: PartitionInput;
  /** When it checkpoints: due by log time and spacing, or asked by the coordinator (onBarrierCheckpoint). */
  readonly trigger: WorkerTrigger;
  readonly stateFrame = workerStateFrame;

  private streamCore: StreamCore;
  private readonly groups: LaneGroups;
  private readonly out: CoreOutput;
  private readonly interleaveSink: InterleaveSink;
  /** Stage-1 partials (null when `partials` is off). */
  private readonly partials: StageOnePartials | null;

  constructor(
    config: EngineConfig,
    /** Its fresh core (a restore brings the core of the cut instead). */
    cores: CoreFactory,
    js: JetStreamClient,
    private readonly host: HostContext,
    /** Where stage-1 partial batches go (start-engine.ts: InboxAcks on the worker's connection). */
    partialsOut: AckedPublish & { close?(): void } = js,
    /** Its restore epoch, carried by its partial batches and barriers (docs/decisions/0057-elastic-workers.md). */
    epoch = 0,
  ) {
    this.operatorId = config.worker;
    this.streamCore = cores.create(config.core);
    const lanes = config.partitions.length;
    this.interleave = new PartitionInterleave(lanes);
    const problem = (partition: number, what: string, err: unknown): void =>
      host.log.warn({ partition, err: err instanceof Error ? err.message : err }, what);
    this.input = new PartitionInput(js, config.partitions, this.interleave, config.maxQueuedEvents, problem);
    this.groups = new LaneGroups(config.partitions, host.send, Date.now, [], host.buffers);
    // Partitioned by service and route, a service's panes from one worker are partial: the merge
    // stage makes them from every worker's partials (docs/decisions/0032-partition-by-route.md).
    const serviceLevel = config.partitionBy === "service";
    this.out = {
      pane: (p) => {
        if (!serviceLevel && p.key.route === undefined) return;
        host.panes.count(p);
        this.groups.pane(epochPane(p, host.epoch));
      },
      late: (r) => {
        this.lateRecords++;
        this.groups.late(r);
      },
    };
    const onPartialRetry = (r: object): void =>
      host.log.warn(r, "partial batch not acknowledged; sending it again with the same message id");
    this.partials = config.partials
      ? new StageOnePartials(config, () => this.streamCore, partialsOut, onPartialRetry, epoch)
      : null;
    const partials = this.partials;
    this.outputs = [{ cause: "TM_PARTIALS", out: partials }];
    this.interleaveSink = {
      event: (lane: number, e: TelemetryEvent, seq: number) => {
        this.groups.at(lane, seq);
        this.eventsTotal++;
        partials?.event(lane, e);
        this.streamCore.event(lane, e, this.out);
      },
      heartbeat: (lane: number, ts: number, seq: number) => {
        this.groups.at(lane, seq);
        partials?.heartbeat(ts, lane);
        this.streamCore.heartbeat(lane, ts, this.out);
      },
      done: (lane: number, seq: number) => this.groups.done(lane, seq),
    };
    this.trigger = new WorkerTrigger(config, (n) => partials?.barrier(n));
  }

  /** Stage-1 partial batches published (0 when `partials` is off). */
  get partialsTotal(): number {
    return this.partials?.total ?? 0;
  }

  /**
   * The coordinator starts checkpoint n (docs/decisions/0031-aligned-checkpoints.md): the host cuts
   * at its next point between two batches and the worker sends barrier n after its partials. A
   * worker without partials takes no part.
   */
  requestBarrier(n: number, startedAt: number): void {
    if (this.partials === null) return;
    this.trigger.request(n, startedAt);
    this.host.wake();
  }

  /** Up to `batch.max` items of the interleave through the core, in interleaved order. */
  processBatch(batch: InterleaveBatch): number {
    const before = this.eventsTotal;
    const k = batch.drain(this.interleaveSink);
    // Per event: a heartbeat waits for the next item of the partitions before it (the interleave's
    // tie rule), which says nothing about how fresh the panes are (pipeline-lag.ts).
    const events = this.eventsTotal - before;
    if (events > 0) this.host.pipelineLag.observe(Date.now(), this.interleave.logTime as number, events);
    return k;
  }

  logTime(): number | null {
    return this.interleave.logTime;
  }

  /** The state a checkpoint cut now carries beside the core's snapshot. */
  handleCheckpoint(): OperatorCheckpoint<WorkerState> {
    const open = this.groups.pending();
    const state: WorkerState = {
      offsets: this.interleave.offsets(),
      // Absent when none, so the file stays version 1.
      ...(open.length > 0 ? { pending: open } : {}),
      ...(this.partials ? { partials: this.partials.state() } : {}),
      ...(this.streamCore instanceof GroupedCore ? { groups: this.streamCore.groups() } : {}),
    };
    return { state, steps: snapshotStepsOf(this.streamCore) };
  }

  /** The core it drives: fresh, or the one restored. */
  get core(): StreamCore {
    return this.streamCore;
  }

  /** Back to a cut: its core, each partition's resume point, the open groups, the partials' tick. */
  restore({ state, core }: Restored<WorkerState>): void {
    this.streamCore = core;
    this.interleave.restore(state.offsets);
    if (state.pending) this.groups.restore(state.pending);
    if (state.partials) this.partials?.restore(state.partials);
  }
}
