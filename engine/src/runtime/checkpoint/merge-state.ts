/**
 * A merge operator's checkpointed state beside the core's snapshot
 * (docs/decisions/0029-two-stage-dataflow.md, "Runtime"): its place in TM_PARTIALS, the tick
 * aligner, and the last aligned checkpoint. Written into the checkpoint header as `merge`.
 */
import type { TickAlignerState } from "../../core/partials/tick-aligner.js";

export interface MergeState {
  /** Stream sequence of the last TM_PARTIALS message handled (0: none). */
  seq: number;
  aligner: TickAlignerState;
  /** The last aligned checkpoint n (0: none): its barriers, replayed, are ignored. */
  lastBarrier?: number;
  /** Its merge partition and their count when written (absent: 0 of 1): a restore at another count splits by them (docs/decisions/0057-elastic-workers.md). */
  mergePartition?: number;
  mergePartitions?: number;
  /**
   * A core made of old merge partitions' cores (merge/merge-groups.ts), in snapshot order: each one's
   * number and their count then; its snapshot is their container (absent: one core).
   */
  groups?: Array<{ partition: number; of: number }>;
}
