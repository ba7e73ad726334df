/**
 * MergeTrigger: when a merge operator checkpoints of its own accord (docs/operations.md, "Merge
 * stage"): every `checkpointEvery` of its log time, at least `checkpointMinWall` apart, never while
 * it aligns a checkpoint's barriers, and none while the coordinator paces them (one aligned within
 * COORDINATED_MS). An aligned checkpoint is cut when its alignment completes: the operator hands
 * that cut to the host itself (docs/decisions/0031-aligned-checkpoints.md).
 */
import type { MergeConfig } from "../config/merge-config.js";
import { COORDINATED_MS } from "./checkpoint-spacing.js";
import type { CheckpointTrigger, CutPlan } from "./checkpoint-trigger.js";

type Spacing = Pick<MergeConfig, "checkpointEveryMs" | "checkpointMinWallMs">;

export class MergeTrigger implements CheckpointTrigger {
  private lastCheckpointLog = -Infinity;
  private lastSnapshotWall: number | null = null;
  private lastAlignedWall: number | null = null;

  constructor(
    private readonly config: Spacing,
    /** True while a checkpoint's barriers are being aligned. */
    private readonly aligning: () => boolean,
    private readonly clock: () => number,
  ) {}

  restored(logTime: number | null): void {
    if (logTime !== null) this.lastCheckpointLog = logTime;
  }

  /** An alignment completed now (its cut goes to the host at once). */
  aligned(now: number): void {
    this.lastAlignedWall = now;
  }

  due(logTime: number): CutPlan | null {
    if (logTime < this.lastCheckpointLog + this.config.checkpointEveryMs) return null;
    const now = this.clock();
    if (this.aligning()) return null;
    if (this.lastAlignedWall !== null && now - this.lastAlignedWall < COORDINATED_MS) return null;
    if (this.lastSnapshotWall !== null && now - this.lastSnapshotWall < this.config.checkpointMinWallMs) return null;
    return {};
  }

  cut(logTime: number | null, wallTime: number): void {
    this.lastCheckpointLog = logTime ?? -Infinity;
    this.lastSnapshotWall = wallTime;
  }

  encoded(): void {}
}
