/**
 * An engine worker's checkpointed state beside the core's snapshot (docs/operations.md,
 * "Checkpoints"): where each owned partition resumes, what was emitted for input messages handled
 * in part, and the stage-1 partials' open tick. Written into the checkpoint header as these fields.
 */
import type { PartialAccumulatorState } from "../../core/partials/partial-accumulator.js";
import type { EmitGroupState } from "../output/emit-group.js";
import type { LaneOffset } from "../input/partition-interleave.js";
import type { CoreGroup } from "../../core/grouped/index.js";

export interface WorkerState {
  /** Resume point of each owned partition, in lane order. */
  offsets: LaneOffset[];
  /** Pane and late batches of input messages handled in part (absent when none: the file stays version 1). */
  pending?: EmitGroupState[];
  /** The stage-1 partial accumulator's open tick (absent when `partials` is off). */
  partials?: PartialAccumulatorState;
  /** A core made of groups restored from another layout (docs/decisions/0057-elastic-workers.md): what each holds. */
  groups?: CoreGroup[];
}
