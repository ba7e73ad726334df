/**
 * EngineWorker: the operator that drives the pure core from the owned partitions of TM_EVENTS
 * (docs/operations.md, "Engine workers"), run by an OperatorHost (host/operator-host.ts), which
 * owns its output, gate, counts and stop. Sources push messages into the PartitionInterleave; a pump releases them to the
 * core in interleaved order in bounded slices (yielding to I/O between slices); what the core emits
 * for the items of one input message goes to the PaneSink as one message per subject (an
 * EmitGroup per lane, emit-group.ts, docs/decisions/0012-batched-transport.md); checkpoints are cut
 * between two items and written once the panes published before the cut are acknowledged
 * (worker-checkpoints.ts). The worker judges no idleness: the core does, in log time, from what the interleave
 * releases (docs/semantics.md, "Watermarks"), so a replay sees exactly what the first run saw.
 * Beside the core, StageOnePartials folds the same records into partial batches for the merge stage
 * (docs/decisions/0029-two-stage-dataflow.md), acknowledged, as the panes, before a checkpoint,
 * which keeps their open tick.
 *
 * Backpressure (docs/decisions/0035-backpressure.md): while a publisher is saturated the host's
 * OutputGate is shut and the pump releases nothing (the consumers then stop pulling, LaneIntake); each
 * partition's queue in the interleave is bounded in messages and events.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { snapshotStepsOf } from "../../core/snapshot/snapshot-steps.js";
import type { CoreOutput, StreamCore } from "../../core/types.js";
import type { TelemetryEvent } from "../../protocol.js";
import type { CheckpointHeader } from "../checkpoint/checkpoint-codec.js";
import { LaneGroups } from "../output/lane-groups.js";
import { LaneIntake } from "../input/lane-intake.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { EngineConfig } from "../config/config.js";
import type { CheckpointWaiting, HostContext, Operator, OperatorOutput } from "../host/operator.js";
import { PartitionInterleave, type InterleaveSink } from "../input/partition-interleave.js";
import { PartitionSource } from "../input/partition-source.js";
import { StageOnePartials } from "./stage-one-partials.js";
import { WorkerCheckpoints, type CheckpointSubject } from "../checkpoint/worker-checkpoints.js";
import type { WorkerState } from "../checkpoint/worker-state.js";

/** Items released per pump slice before yielding to the event loop, in chunks of CHUNK. */
const SLICE = 4096;
const CHUNK = 128;

export class EngineWorker implements Operator {
  readonly operatorId: string;
  readonly interleave: PartitionInterleave;
  readonly outputs: readonly OperatorOutput[];
  eventsTotal = 0;
  lateRecords = 0;
  /** When and how it checkpoints (onCheckpoint, onBarrierCheckpoint, lastCheckpointWall). */
  readonly checkpoints: WorkerCheckpoints;

  private readonly sources: PartitionSource[] = [];
  private readonly intake: LaneIntake;
  /** From a checkpoint's cut until its snapshot is encoded: the pump releases nothing meanwhile. */
  private holding = false;
  private scheduled = false;
  private closing = false;
  private readonly groups: LaneGroups;
  private readonly out: CoreOutput;
  private readonly interleaveSink: InterleaveSink;
  /** Stage-1 partials (null when `partials` is off). */
  private readonly partials: StageOnePartials | null;

  constructor(
    private readonly config: EngineConfig,
    private readonly core: StreamCore,
    store: CheckpointStore,
    private readonly js: JetStreamClient,
    private readonly host: HostContext,
    /** The checkpoint restored from: offsets, log time and the groups it carried. */
    restored: CheckpointHeader | undefined,
  ) {
    this.operatorId = config.worker;
    const lanes = config.partitions.length;
    this.interleave = new PartitionInterleave(lanes, restored?.offsets);
    this.intake = new LaneIntake(this.interleave, lanes, config.maxQueuedEvents);
    this.groups = new LaneGroups(config.partitions, host.send, Date.now, restored?.pending, host.buffers);
    // Partitioned by service and route, a service's panes from one worker are partial: the merge
    // stage makes them from every worker's partials (docs/decisions/0032-partition-by-route.md).
    const serviceLevel = config.partitionBy === "service";
    this.out = {
      pane: (p) => {
        if (!serviceLevel && p.key.route === undefined) return;
        host.panes.count(p);
        this.groups.pane(p);
      },
      late: (r) => {
        this.lateRecords++;
        this.groups.late(r);
      },
    };
    const onPartialRetry = (r: object): void =>
      host.log.warn(r, "partial batch not acknowledged; sending it again with the same message id");
    this.partials = config.partials ? new StageOnePartials(config, core, js, onPartialRetry, restored?.partials) : null;
    const partials = this.partials;
    this.outputs = [{ cause: "TM_PARTIALS", out: partials }];
    this.interleaveSink = {
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
    this.checkpoints = new WorkerCheckpoints(config, store, this.checkpointSubject(), host.log, restored?.logTime);
  }

  /** Stage-1 partial batches published (0 when `partials` is off). */
  get partialsTotal(): number {
    return this.partials?.total ?? 0;
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

  checkpointWaiting(): CheckpointWaiting | null {
    return this.checkpoints.waiting();
  }

  /** Starts one consumer per owned partition. */
  onStart(): void {
    const offsets = this.interleave.offsets();
    this.config.partitions.forEach((partition, lane) => {
      const source = new PartitionSource(this.js, partition, offsets[lane]?.lastSeq ?? 0, {
        message: (seq, events, hb) => this.onMessage(lane, seq, events, hb),
        backpressure: () => this.backpressure(lane),
        problem: (what, err) => this.host.log.warn({ partition, err: err instanceof Error ? err.message : err }, what),
      });
      this.sources.push(source);
      source.start();
    });
  }

  async onStop(): Promise<void> {
    this.closing = true;
    // Release consumers paused by backpressure first, or they could not see the stop.
    this.intake.releaseAll();
    await Promise.all(this.sources.map((s) => s.stop()));
  }

  /** A checkpoint in progress waits for its panes' acks too, within the same deadline. */
  handleFinalCheckpoint(deadline: Promise<false>): Promise<boolean> {
    return this.checkpoints.final(deadline);
  }

  onOutputOpen(): void {
    this.wake();
  }

  /**
   * Nothing to do until the connection returns: the interleave waits for the silent partitions
   * (docs/operations.md, "Recovery"), and the log time stands still meanwhile.
   */
  onConnectionLost(): void {}

  /** Back online: recreate every consumer at once from its last sequence + 1. */
  onConnectionRestored(): void {
    for (const s of this.sources) s.restart();
  }

  private onMessage(lane: number, seq: number, events: TelemetryEvent[] | null, hb: number): void {
    this.interleave.push(lane, seq, events, hb);
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
    if (this.host.gate().blocked()) {
      // Held input: nothing released, but a checkpoint asked for is cut all the same (its barrier
      // goes in order after the partials before it), and waits for its acks like any other.
      this.checkpoints.maybe();
      return;
    }
    // Small chunks, so the sinks' windows stay full and little waits past them (one chunk's output at most).
    let n = 0;
    let more = true;
    while (more && n < SLICE && !this.host.outputSaturated()) {
      const before = this.eventsTotal;
      const k = this.interleave.drain(this.interleaveSink, CHUNK);
      // Per event: a heartbeat waits for the next item of the partitions before it (the interleave's
      // tie rule), which says nothing about how fresh the panes are (pipeline-lag.ts).
      const events = this.eventsTotal - before;
      if (events > 0) this.host.pipelineLag.observe(Date.now(), this.interleave.logTime as number, events);
      n += k;
      more = k === CHUNK;
    }
    this.checkpoints.maybe();
    this.intake.release();
    if (more) this.wake();
  }

  /** The state a checkpoint cut now carries beside the core's snapshot. */
  private handleCheckpoint(): WorkerState {
    const open = this.groups.pending();
    return {
      offsets: this.interleave.offsets(),
      // Absent when none, so the file stays version 1.
      ...(open.length > 0 ? { pending: open } : {}),
      ...(this.partials ? { partials: this.partials.state() } : {}),
    };
  }

  /** What the checkpoints take from the worker (worker-checkpoints.ts). */
  private checkpointSubject(): CheckpointSubject {
    return {
      logTime: () => this.interleave.logTime,
      state: () => this.handleCheckpoint(),
      snapshot: () => snapshotStepsOf(this.core),
      barrier: (n) => this.partials?.barrier(n),
      flushOutput: () => this.host.flushOutput(),
      hold: (held) => {
        this.holding = held;
        if (!held) this.wake();
      },
      wake: () => this.wake(),
    };
  }
}
