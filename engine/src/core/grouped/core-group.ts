/** The shapes of a grouped core's groups (grouped-core.ts; docs/decisions/0057-elastic-workers.md). */
import type { PartitionBy } from "../../protocol.js";
import type { StreamCore } from "../types.js";

/** What one group holds: the worker's partitions it restores and, for each, its lane in the group's core. */
export interface CoreGroup {
  /** TM_EVENTS partitions, in the order of `lanes`. */
  partitions: number[];
  /** Each partition's lane in the group's core. */
  lanes: number[];
  /** Lanes of the group's core (its config's `partitions`). */
  coreLanes: number;
}

/** A group with its core. */
export interface GroupCore extends CoreGroup {
  core: StreamCore;
}

/** How the worker's keys are spread: what decides that a key is a live group's. */
export interface GroupKeys {
  partitionCount: number;
  partitionBy: PartitionBy;
}
