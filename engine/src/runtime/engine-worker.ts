/**
 * EngineWorker: drives the pure core from the owned partitions of TM_EVENTS (docs/operations.md,
 * "Engine workers"). Sources push messages into the PartitionMerge; a pump releases them to the
 * core in merged order in bounded slices (yielding to I/O between slices); the core's panes and
 * late records go to the PaneSink; every `checkpointEvery` of log time a snapshot (core bytes +
 * offsets) is taken synchronously and written asynchronously once the panes before it are
 * acknowledged. The worker judges no idleness: the core does, in log time, from what the merge
 * releases (docs/semantics.md, "Watermarks"), so a replay sees exactly what the first run saw.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { CoreOutput, StreamCore } from "../core/types.js";
import type { LateRecord, Pane, TelemetryEvent } from "../protocol.js";
import type { Checkpoint } from "./checkpoint-codec.js";
import type { CheckpointStore } from "./checkpoint-store.js";
import type { EngineConfig } from "./config.js";
import { PaneSink } from "./pane-sink.js";
import { PartitionMerge, type LaneOffset, type MergeSink } from "./partition-merge.js";
import { PartitionSource } from "./partition-source.js";

/** Items released per pump slice before yielding to the event loop, in chunks of CHUNK. */
const SLICE = 4096;
const CHUNK = 128;
/** Messages queued per partition before its consumer pauses. */
const MAX_QUEUED = 64;
/** Checkpoints are spaced by at least this many times the last snapshot's (synchronous) cost. */
const SNAPSHOT_DUTY = 20;

export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CheckpointEvent {
  file: string;
  bytes: number;
  /** Synchronous part: core snapshot + offsets, ms. */
  snapshotMs: number;
  /** Snapshot to durable file, including waiting for pane acks, ms. */
  totalMs: number;
  logTime: number | null;
}

export class EngineWorker {
  readonly merge: PartitionMerge;
  readonly sink: PaneSink;
  eventsTotal = 0;
  readonly panesEmitted = new Map<string, Map<string, number>>();
  /** Wall clock when the last durable checkpoint's snapshot was taken. */
  lastCheckpointWall: number | null = null;
  onCheckpoint: (e: CheckpointEvent) => void = () => undefined;

  private readonly sources: PartitionSource[] = [];
  private readonly spaceWaiters: Array<(() => void) | undefined>;
  private lastCheckpointLog = -Infinity;
  private lastSnapshotWall: number | null = null;
  private lastSnapshotMs = 0;
  private writing: Promise<void> | undefined;
  private scheduled = false;
  private waitingRoom = false;
  private closing = false;
  private connectionDown = false;
  private current = { seq: 0, index: 0 };
  private readonly out: CoreOutput;
  private readonly mergeSink: MergeSink;

  constructor(
    private readonly config: EngineConfig,
    private readonly core: StreamCore,
    private readonly store: CheckpointStore,
    private readonly js: JetStreamClient,
    nc: NatsConnection,
    private readonly log: WorkerLog,
    restored: readonly LaneOffset[] | undefined,
    restoredLogTime: number | null,
  ) {
    const lanes = config.partitions.length;
    this.merge = new PartitionMerge(lanes, restored);
    this.spaceWaiters = new Array<(() => void) | undefined>(lanes).fill(undefined);
    if (restoredLogTime !== null) this.lastCheckpointLog = restoredLogTime;
    this.sink = new PaneSink(nc, config.maxInFlight, (why, subject) =>
      log.warn({ why, subject }, "publish not acknowledged; sending it again with the same message id"),
    );
    this.out = { pane: (p) => this.emitPane(p), late: (r) => this.emitLate(r) };
    this.mergeSink = {
      event: (lane: number, e: TelemetryEvent, seq: number, index: number) => {
        this.current.seq = seq;
        this.current.index = index;
        this.eventsTotal++;
        this.core.event(lane, e, this.out);
      },
      heartbeat: (lane: number, ts: number) => this.core.heartbeat(lane, ts, this.out),
    };
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
    for (const w of this.spaceWaiters) w?.();
    await Promise.all(this.sources.map((s) => s.stop()));
    // One deadline for everything that waits on acks: a checkpoint in progress waits for its panes'
    // acks too, and with TM_PANES unreachable they never come (docs/operations.md, "Engine workers").
    const deadline = new Promise<false>((r) => setTimeout(() => r(false), flushTimeoutMs).unref());
    const before = this.writing ? await Promise.race([this.writing.then(() => true), deadline]) : true;
    const taken = before ? this.snapshot() : undefined;
    const flushed = taken !== undefined && (await Promise.race([this.sink.flush().then(() => true), deadline]));
    if (taken && flushed) await this.persist(taken.cp, taken.t0, taken.snapshotMs);
    else this.log.warn({}, "pending panes were not acknowledged in time: no final checkpoint (the log replays them)");
    this.sink.close();
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
    if (this.closing || this.merge.queued(lane) < MAX_QUEUED) return undefined;
    return new Promise((resolve) => (this.spaceWaiters[lane] = resolve));
  }

  private wake(): void {
    if (this.scheduled || this.closing) return;
    this.scheduled = true;
    setImmediate(() => this.pump());
  }

  private pump(): void {
    this.scheduled = false;
    if (this.closing) return;
    if (this.sink.saturated) {
      if (!this.waitingRoom) {
        this.waitingRoom = true;
        void this.sink.room().then(() => {
          this.waitingRoom = false;
          this.wake();
        });
      }
      return;
    }
    // Small chunks, so the sink's in-flight window stays full without overshooting it.
    let n = 0;
    let more = true;
    while (more && n < SLICE && !this.sink.saturated) {
      const k = this.merge.drain(this.mergeSink, CHUNK);
      n += k;
      more = k === CHUNK;
    }
    this.maybeCheckpoint();
    for (let lane = 0; lane < this.spaceWaiters.length; lane++) {
      const w = this.spaceWaiters[lane];
      if (w && this.merge.queued(lane) < MAX_QUEUED / 2) {
        this.spaceWaiters[lane] = undefined;
        w();
      }
    }
    if (more) this.wake();
  }

  private emitPane(p: Pane): void {
    p.pipelineLagMs = Date.now() - p.emittedAt;
    this.sink.pane(p);
    let kinds = this.panesEmitted.get(p.policy);
    if (!kinds) this.panesEmitted.set(p.policy, (kinds = new Map()));
    kinds.set(p.kind, (kinds.get(p.kind) ?? 0) + 1);
  }

  private emitLate(r: LateRecord): void {
    // The event's place in the log and the window it was dropped from fix the id, so a replayed
    // drop is deduplicated while one event dropped from several windows of a policy (10 s, 60 s,
    // its session) keeps a record for each.
    const where = `late|${this.current.seq}|${this.current.index}|${r.policy}|${r.window.start}|${r.window.end}`;
    this.sink.late(r, r.session === undefined ? where : `${where}|${r.session}`);
  }

  private maybeCheckpoint(): void {
    const t = this.merge.logTime;
    if (this.writing || t === null || t < this.lastCheckpointLog + this.config.checkpointEveryMs) return;
    const now = Date.now();
    const gap = Math.max(this.config.checkpointMinWallMs, SNAPSHOT_DUTY * this.lastSnapshotMs);
    if (this.lastSnapshotWall !== null && now - this.lastSnapshotWall < gap) return;
    const taken = this.snapshot();
    this.writing = this.sink
      .flush()
      .then(() => this.persist(taken.cp, taken.t0, taken.snapshotMs))
      .catch((err: Error) => this.log.error({ err: err.message }, "checkpoint failed; the next one will retry"))
      .finally(() => (this.writing = undefined));
  }

  private snapshot(): { cp: Checkpoint; t0: number; snapshotMs: number } {
    const t0 = performance.now();
    const logTime = this.merge.logTime;
    const cp: Checkpoint = {
      header: {
        worker: this.config.worker,
        partitionCount: this.config.partitionCount,
        partitions: [...this.config.partitions],
        offsets: this.merge.offsets(),
        logTime,
        wallTime: Date.now(),
      },
      snapshot: this.core.snapshot(),
    };
    this.lastCheckpointLog = logTime ?? -Infinity;
    this.lastSnapshotWall = cp.header.wallTime;
    this.lastSnapshotMs = performance.now() - t0;
    return { cp, t0, snapshotMs: this.lastSnapshotMs };
  }

  private async persist(cp: Checkpoint, t0: number, snapshotMs: number): Promise<void> {
    const w = await this.store.write(cp);
    this.lastCheckpointWall = cp.header.wallTime;
    this.onCheckpoint({
      file: w.file,
      bytes: w.bytes,
      snapshotMs,
      totalMs: performance.now() - t0,
      logTime: cp.header.logTime,
    });
  }
}
