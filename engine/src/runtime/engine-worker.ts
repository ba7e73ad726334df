/**
 * EngineWorker: drives the pure core from the owned partitions of TM_EVENTS (docs/operations.md,
 * "Engine workers"). Sources push messages into the PartitionMerge; a pump releases them to the
 * core in merged order in bounded slices (yielding to I/O between slices); what the core emits
 * for the items of one input message goes to the PaneSink as one message per subject (an
 * EmitGroup per lane, emit-group.ts, docs/decisions/0012-batched-transport.md); every
 * `checkpointEvery` of log time a checkpoint is cut between two items (offsets, the groups still
 * open), the core's snapshot is encoded in slices across event-loop turns while the pump releases
 * nothing (docs/decisions/0016-checkpoints-without-pause.md), and the file is written once the panes
 * published before the cut are acknowledged. The worker judges no idleness: the core does, in log time, from what the merge
 * releases (docs/semantics.md, "Watermarks"), so a replay sees exactly what the first run saw.
 * Beside the core, StageOnePartials folds the same records into partial batches for the merge stage
 * (docs/decisions/0029-two-stage-dataflow.md), acknowledged, as the panes, before a checkpoint,
 * which keeps their open tick.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { snapshotStepsOf } from "../core/snapshot-steps.js";
import type { CoreOutput, SnapshotSteps, StreamCore } from "../core/types.js";
import type { Pane, TelemetryEvent } from "../protocol.js";
import type { Checkpoint, CheckpointHeader } from "./checkpoint-codec.js";
import { BodyBuffers } from "./body-buffers.js";
import type { GroupMessage } from "./emit-group.js";
import { LaneGroups } from "./lane-groups.js";
import { LaneIntake } from "./lane-intake.js";
import { OutputGate } from "./output-gate.js";
import type { PublishStats } from "./pane-sink.js";
import { PipelineLag } from "./pipeline-lag.js";
import type { CheckpointStore } from "./checkpoint-store.js";
import type { EngineConfig } from "./config.js";
import { PartitionMerge, type MergeSink } from "./partition-merge.js";
import { PartitionSource } from "./partition-source.js";
import { encodeAcrossTurns } from "./snapshot-turns.js";
import { StageOnePartials } from "./stage-one-partials.js";

/** A checkpoint cut: its header is taken, its snapshot still to encode (input held meanwhile). */
interface Cut {
  header: CheckpointHeader;
  steps: SnapshotSteps;
  t0: number;
}

/** A cut with its snapshot encoded. */
interface Taken {
  cp: Checkpoint;
  t0: number;
  pauseMs: number;
  longestSliceMs: number;
  workMs: number;
}

/** Items released per pump slice before yielding to the event loop, in chunks of CHUNK. */
const SLICE = 4096;
const CHUNK = 128;
/** Checkpoints are spaced by at least this many times the last snapshot's encoding work (its slices summed). */
const SNAPSHOT_DUTY = 20;
/** While the coordinator asked for a checkpoint this recently, the worker takes none of its own. */
const COORDINATED_MS = 30_000;

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

export interface CheckpointEvent {
  file: string;
  bytes: number;
  /** The pause: input held from the cut until the snapshot was encoded, ms. */
  pauseMs: number;
  /** The longest synchronous slice of that encoding, ms. */
  longestSliceMs: number;
  /** The encoding's own work, the sum of its slices, ms: the next checkpoint comes no sooner than 20× this. */
  workMs: number;
  /** Snapshot to durable file, including waiting for pane acks, ms. */
  totalMs: number;
  logTime: number | null;
}

export class EngineWorker {
  readonly merge: PartitionMerge;
  readonly sink: EngineSink;
  eventsTotal = 0;
  lateRecords = 0;
  /** Wall clock − log time as events are handled (tidemark_engine_pipeline_lag_seconds, tm.status). */
  readonly pipelineLag = new PipelineLag();
  readonly panesEmitted = new Map<string, Map<string, number>>();
  /** Wall clock when the last durable checkpoint's snapshot was taken. */
  lastCheckpointWall: number | null = null;
  onCheckpoint: (e: CheckpointEvent) => void = () => undefined;
  /** A checkpoint the coordinator asked for is durable (aligned checkpoints, ADR 0031). */
  onBarrierCheckpoint: (ack: { n: number; file: string; startDelayMs: number }) => void = () => undefined;

  /** Shut while a publisher is saturated: the input is held (docs/decisions/0035-backpressure.md). */
  readonly gate: OutputGate;
  private readonly sources: PartitionSource[] = [];
  private readonly intake: LaneIntake;
  private lastCheckpointLog = -Infinity;
  private lastSnapshotWall: number | null = null;
  private lastWorkMs = 0;
  private writing: Promise<void> | undefined;
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
  /** The checkpoint n the coordinator asked for, not cut yet. */
  private barrierAsked: { n: number; startedAt: number } | null = null;
  /** The checkpoint the coordinator asked for, cut and not yet durable (waiting for acks, or written). */
  private barrierWaiting: { n: number; since: number } | null = null;
  private lastBarrierWall: number | null = null;

  constructor(
    private readonly config: EngineConfig,
    private readonly core: StreamCore,
    private readonly store: CheckpointStore,
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
    if (restored?.logTime != null) this.lastCheckpointLog = restored.logTime;
    this.sink = sink;
    const buffers = new BodyBuffers();
    sink.onReturned = (b) => buffers.give(b);
    const send = (m: GroupMessage): void => this.sink.publish(m.subject, m.body, m.msgId);
    this.groups = new LaneGroups(config.partitions, send, Date.now, restored?.pending, buffers);
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
      { cause: "TM_PANES" as const, out: sink },
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
    if (this.barrierAsked === null || n > this.barrierAsked.n) this.barrierAsked = { n, startedAt };
    this.lastBarrierWall = Date.now();
    this.wake();
  }

  /** The aligned checkpoint cut here and not yet durable, with how long it has waited (null: none). */
  checkpointWaiting(): { n: number; waitedMs: number } | null {
    const w = this.barrierWaiting;
    return w === null ? null : { n: w.n, waitedMs: Date.now() - w.since };
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
    const before = this.writing ? await Promise.race([this.writing.then(() => true), deadline]) : true;
    const taken = before ? await this.encode(this.cut(undefined, true)) : undefined;
    const flushed = taken !== undefined && (await Promise.race([this.flushOutput().then(() => true), deadline]));
    if (taken && flushed) await this.persist(taken);
    else this.log.warn({}, "pending panes were not acknowledged in time: no final checkpoint (the log replays them)");
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
      this.maybeCheckpoint();
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
    this.maybeCheckpoint();
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

  private maybeCheckpoint(): void {
    const t = this.merge.logTime;
    if (this.writing || t === null) return;
    const barrier = this.barrierAsked;
    if (barrier === null && !this.localCheckpointDue(t)) return;
    this.barrierAsked = null;
    const cut = this.cut(barrier?.n);
    // Barrier n right after the partials emitted before the cut, in order with them (ADR 0031).
    if (barrier) this.partials?.barrier(barrier.n);
    const startDelayMs = barrier ? cut.header.wallTime - barrier.startedAt : 0;
    if (barrier) this.barrierWaiting = { n: barrier.n, since: cut.header.wallTime };
    // The acks of the panes published before the cut are awaited while the snapshot encodes.
    this.writing = Promise.all([this.encode(cut), this.flushOutput()])
      .then(([taken]) => this.persist(taken))
      .then((file) => {
        if (barrier) this.onBarrierCheckpoint({ n: barrier.n, file, startDelayMs });
      })
      .catch((err: Error) => this.log.error({ err: err.message }, "checkpoint failed; the next one will retry"))
      .finally(() => {
        this.writing = undefined;
        this.barrierWaiting = null;
        // A checkpoint the coordinator asked for meanwhile: cut it now, not at the next input, which
        // may never come (the log read to its end).
        if (this.barrierAsked !== null) this.wake();
      });
  }

  /**
   * A checkpoint of the worker's own: every `checkpointEvery` of log time, spaced in wall time;
   * none while the coordinator paces them (it asked within COORDINATED_MS).
   */
  private localCheckpointDue(t: number): boolean {
    const now = Date.now();
    if (this.lastBarrierWall !== null && now - this.lastBarrierWall < COORDINATED_MS) return false;
    if (t < this.lastCheckpointLog + this.config.checkpointEveryMs) return false;
    const gap = Math.max(this.config.checkpointMinWallMs, SNAPSHOT_DUTY * this.lastWorkMs);
    return this.lastSnapshotWall === null || now - this.lastSnapshotWall >= gap;
  }

  /** Cuts a checkpoint between two items: offsets, log time and open groups now; input held from here. */
  private cut(barrier?: number, final = false): Cut {
    const t0 = performance.now();
    const logTime = this.merge.logTime;
    const header: CheckpointHeader = {
      worker: this.config.worker,
      partitionCount: this.config.partitionCount,
      partitions: [...this.config.partitions],
      offsets: this.merge.offsets(),
      logTime,
      wallTime: Date.now(),
      ...this.pending(),
      ...(this.partials ? { partials: this.partials.state() } : {}),
      ...(barrier !== undefined ? { barrier } : {}),
      ...(final ? { final } : {}),
    };
    this.lastCheckpointLog = logTime ?? -Infinity;
    this.lastSnapshotWall = header.wallTime;
    this.holding = true;
    return { header, steps: snapshotStepsOf(this.core), t0 };
  }

  /** Encodes the cut's snapshot across event-loop turns, then releases the input. */
  private async encode(cut: Cut): Promise<Taken> {
    try {
      const s = await encodeAcrossTurns(cut.steps);
      this.lastWorkMs = s.workMs;
      const cp = { header: cut.header, snapshot: s.bytes };
      const pauseMs = performance.now() - cut.t0;
      return { cp, t0: cut.t0, pauseMs, longestSliceMs: s.longestSliceMs, workMs: s.workMs };
    } finally {
      this.holding = false;
      this.wake();
    }
  }

  /** The groups still open, for the checkpoint (absent when none, so the file stays version 1). */
  private pending(): { pending?: CheckpointHeader["pending"] } {
    const open = this.groups.pending();
    return open.length > 0 ? { pending: open } : {};
  }

  private async persist(taken: Taken): Promise<string> {
    const { cp, t0 } = taken;
    const w = await this.store.write(cp);
    this.lastCheckpointWall = cp.header.wallTime;
    this.onCheckpoint({
      file: w.file,
      bytes: w.bytes,
      pauseMs: taken.pauseMs,
      longestSliceMs: taken.longestSliceMs,
      workMs: taken.workMs,
      totalMs: performance.now() - t0,
      logTime: cp.header.logTime,
    });
    return w.file;
  }
}
