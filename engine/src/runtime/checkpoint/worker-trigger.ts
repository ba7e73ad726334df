/**
 * WorkerTrigger: when an engine worker checkpoints (docs/operations.md, "Checkpoints"). Every
 * `checkpointEvery` of log time (spaced by `checkpointMinWall`, 20× the last snapshot's encoding
 * work and, past a floor, 100× the work done while it held the input: checkpoint-spacing.ts), or at
 * the next point between two items after the coordinator asked for checkpoint n
 * (docs/decisions/0031-aligned-checkpoints.md): barrier n goes out right after the cut, after the
 * partials before it, and once n is durable the worker acknowledges it. None of its own while the
 * coordinator paces them (it asked within COORDINATED_MS). The OperatorHost runs the cut
 * (checkpoint-trigger.ts); a cut needs no room downstream, so a worker held by backpressure cuts
 * all the same (docs/decisions/0035-backpressure.md).
 */
import type { EngineConfig } from "../config/config.js";
import { checkpointSpacing, COORDINATED_MS, SNAPSHOT_DUTY } from "./checkpoint-spacing.js";
import type { CheckpointTrigger, CutPlan } from "./checkpoint-trigger.js";
import type { Taken } from "./encode-cut.js";

/** A checkpoint the coordinator asked for is durable here (aligned checkpoints, ADR 0031). */
export interface BarrierAck {
  n: number;
  file: string;
  startDelayMs: number;
  holdWorkMs: number;
}

type Spacing = Pick<EngineConfig, "checkpointEveryMs" | "checkpointMinWallMs">;

export class WorkerTrigger implements CheckpointTrigger {
  onBarrierCheckpoint: (ack: BarrierAck) => void = () => undefined;

  private lastCheckpointLog = -Infinity;
  private lastSnapshotWall: number | null = null;
  private lastWorkMs = 0;
  private lastHoldWorkMs = 0;
  /** The checkpoint n the coordinator asked for, not cut yet. */
  private asked: { n: number; startedAt: number } | null = null;
  private lastAskedWall: number | null = null;

  constructor(
    private readonly config: Spacing,
    /** Sends barrier n after the partials emitted so far. */
    private readonly sendBarrier: (n: number) => void,
  ) {}

  restored(logTime: number | null): void {
    if (logTime !== null) this.lastCheckpointLog = logTime;
  }

  /** The coordinator starts checkpoint n: cut at the next point between two items. */
  request(n: number, startedAt: number): void {
    if (this.asked === null || n > this.asked.n) this.asked = { n, startedAt };
    this.lastAskedWall = Date.now();
  }

  due(logTime: number): CutPlan | null {
    const asked = this.asked;
    if (asked === null) return this.localDue(logTime) ? {} : null;
    this.asked = null;
    return {
      barrier: asked.n,
      // Barrier n right after the partials emitted before the cut, in order with them (ADR 0031).
      afterCut: () => this.sendBarrier(asked.n),
      durable: (file, taken, wallTime) =>
        this.onBarrierCheckpoint({
          n: asked.n,
          file,
          startDelayMs: wallTime - asked.startedAt,
          holdWorkMs: taken.holdWorkMs,
        }),
    };
  }

  cut(logTime: number | null, wallTime: number): void {
    this.lastCheckpointLog = logTime ?? -Infinity;
    this.lastSnapshotWall = wallTime;
  }

  encoded(taken: Taken): void {
    this.lastWorkMs = taken.workMs;
    this.lastHoldWorkMs = taken.holdWorkMs;
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
}
