/**
 * WorkerCheckpoints: when an engine worker checkpoints, and how (docs/operations.md,
 * "Checkpoints"). Every `checkpointEvery` of log time (spaced by `checkpointMinWall`, 20× the
 * last snapshot's encoding work and, past a floor, 100× the work done while it held the input:
 * checkpoint-spacing.ts), or at the next point
 * between two items after the coordinator
 * asked for checkpoint n (docs/decisions/0031-aligned-checkpoints.md): the checkpoint is cut
 * (offsets, open groups, the partials' open tick; barrier n after the partials before the cut),
 * the core's snapshot is encoded across event-loop turns while the input is held
 * (docs/decisions/0016-checkpoints-without-pause.md), and the file is written once everything
 * published before the cut is acknowledged: never durable ahead of its panes. A cut needs no room
 * downstream, so a worker held by backpressure cuts all the same and its checkpoint waits for the
 * acks like any other (docs/decisions/0035-backpressure.md).
 */
import type { SnapshotSteps } from "../../core/types.js";
import type { CheckpointEvent } from "./checkpoint-event.js";
import { checkpointHeader, persistCheckpoint } from "./checkpoint-frame.js";
import type { CheckpointStore } from "./checkpoint-store.js";
import type { EngineConfig } from "../config/config.js";
import type { WorkerState } from "./worker-state.js";
import { checkpointSpacing, COORDINATED_MS, SNAPSHOT_DUTY } from "./checkpoint-spacing.js";
import { encodeCut, type Cut, type Taken } from "./encode-cut.js";

export type { CheckpointEvent } from "./checkpoint-event.js";

/** What the checkpoints take from their worker. */
export interface CheckpointSubject {
  /** The log time the core has seen (null: nothing yet). */
  logTime(): number | null;
  /** The worker's part of a header, now: offsets, open groups, the partials' open tick. */
  state(): WorkerState;
  snapshot(): SnapshotSteps;
  /** Barrier n, after the partials emitted so far. */
  barrier(n: number): void;
  /** Resolves once everything published so far is acknowledged. */
  flushOutput(): Promise<void>;
  /** The input is held from a cut (true) until its snapshot is encoded (false: the worker wakes). */
  hold(held: boolean): void;
  wake(): void;
}

interface Log {
  error(obj: object, msg: string): void;
}

export class WorkerCheckpoints {
  /** Wall clock when the last durable checkpoint's snapshot was taken. */
  lastCheckpointWall: number | null = null;
  onCheckpoint: (e: CheckpointEvent) => void = () => undefined;
  /** A checkpoint the coordinator asked for is durable (aligned checkpoints, ADR 0031). */
  onBarrierCheckpoint: (ack: { n: number; file: string; startDelayMs: number; holdWorkMs: number }) => void = () =>
    undefined;

  private lastCheckpointLog = -Infinity;
  private lastSnapshotWall: number | null = null;
  private lastWorkMs = 0;
  private lastHoldWorkMs = 0;
  private writing: Promise<void> | undefined;
  /** The checkpoint n the coordinator asked for, not cut yet. */
  private asked: { n: number; startedAt: number } | null = null;
  /** The one it asked for, cut and not yet durable (waiting for acks, or written). */
  private waitingFor: { n: number; since: number } | null = null;
  private lastAskedWall: number | null = null;

  constructor(
    private readonly config: EngineConfig,
    private readonly store: CheckpointStore,
    private readonly subject: CheckpointSubject,
    private readonly log: Log,
    restoredLogTime: number | null | undefined,
  ) {
    if (restoredLogTime != null) this.lastCheckpointLog = restoredLogTime;
  }

  /** The coordinator starts checkpoint n: cut at the next point between two items. */
  request(n: number, startedAt: number): void {
    if (this.asked === null || n > this.asked.n) this.asked = { n, startedAt };
    this.lastAskedWall = Date.now();
  }

  /** The aligned checkpoint cut here and not yet durable, with how long it has waited (null: none). */
  waiting(): { n: number; waitedMs: number } | null {
    const w = this.waitingFor;
    return w === null ? null : { n: w.n, waitedMs: Date.now() - w.since };
  }

  /** Between two items: cuts a checkpoint when one is due or asked for, and none is being written. */
  maybe(): void {
    const t = this.subject.logTime();
    if (this.writing || t === null) return;
    const barrier = this.asked;
    if (barrier === null && !this.localDue(t)) return;
    this.asked = null;
    const cut = this.cut(barrier?.n);
    // Barrier n right after the partials emitted before the cut, in order with them (ADR 0031).
    if (barrier) this.subject.barrier(barrier.n);
    const startDelayMs = barrier ? cut.header.wallTime - barrier.startedAt : 0;
    if (barrier) this.waitingFor = { n: barrier.n, since: cut.header.wallTime };
    // The acks of what was published before the cut are awaited while the snapshot encodes.
    this.writing = Promise.all([this.encode(cut), this.subject.flushOutput()])
      .then(async ([taken]) => ({ file: await this.persist(taken), holdWorkMs: taken.holdWorkMs }))
      .then(({ file, holdWorkMs }) => {
        if (barrier) this.onBarrierCheckpoint({ n: barrier.n, file, startDelayMs, holdWorkMs });
      })
      .catch((err: Error) => this.log.error({ err: err.message }, "checkpoint failed; the next one will retry"))
      .finally(() => {
        this.writing = undefined;
        this.waitingFor = null;
        // A checkpoint the coordinator asked for meanwhile: cut it now, not at the next input, which
        // may never come (the log read to its end).
        if (this.asked !== null) this.subject.wake();
      });
  }

  /**
   * The final checkpoint of a stop: once the one being written is done, cut, encode, and write it
   * once its acks are in — all before `deadline`. False when the deadline came first (no file).
   */
  async final(deadline: Promise<false>): Promise<boolean> {
    const before = this.writing ? await Promise.race([this.writing.then(() => true), deadline]) : true;
    const taken = before ? await this.encode(this.cut(undefined, true)) : undefined;
    const flushed =
      taken !== undefined && (await Promise.race([this.subject.flushOutput().then(() => true), deadline]));
    if (!taken || !flushed) return false;
    await this.persist(taken);
    return true;
  }

  /**
   * A checkpoint of the worker's own: every `checkpointEvery` of log time, spaced in wall time;
   * none while the coordinator paces them (it asked within COORDINATED_MS).
   */
  private localDue(t: number): boolean {
    const now = Date.now();
    if (this.lastAskedWall !== null && now - this.lastAskedWall < COORDINATED_MS) return false;
    if (t < this.lastCheckpointLog + this.config.checkpointEveryMs) return false;
    const gap = Math.max(
      this.config.checkpointMinWallMs,
      SNAPSHOT_DUTY * this.lastWorkMs,
      checkpointSpacing(0, this.lastHoldWorkMs),
    );
    return this.lastSnapshotWall === null || now - this.lastSnapshotWall >= gap;
  }

  /** Cuts a checkpoint between two items: offsets, log time and open groups now; input held from here. */
  private cut(barrier?: number, final = false): Cut {
    const t0 = performance.now();
    const logTime = this.subject.logTime();
    const owner = { ...this.config, operatorId: this.config.worker };
    const header = checkpointHeader(owner, logTime, Date.now(), this.subject.state(), barrier, final);
    this.lastCheckpointLog = logTime ?? -Infinity;
    this.lastSnapshotWall = header.wallTime;
    this.subject.hold(true);
    return { header, steps: this.subject.snapshot(), t0 };
  }

  /** Encodes the cut's snapshot, the input held until its state is captured (encode-cut.ts). */
  private async encode(cut: Cut): Promise<Taken> {
    const taken = await encodeCut(cut, () => this.subject.hold(false));
    this.lastWorkMs = taken.workMs;
    this.lastHoldWorkMs = taken.holdWorkMs;
    return taken;
  }

  private async persist(taken: Taken): Promise<string> {
    return persistCheckpoint(this.store, taken.cp, taken, (e) => {
      this.lastCheckpointWall = taken.cp.header.wallTime;
      this.onCheckpoint(e);
    });
  }
}
