/**
 * core/grouped — a worker's core made of the cores of groups restored from another layout's
 * checkpoints (docs/decisions/0057-elastic-workers.md): GroupedCore, its status, its snapshot.
 */
export { GroupedCore, type CoreGroup, type GroupCore, type GroupKeys } from "./grouped-core.js";
export { MergeGroups, type MergeGroup } from "./merge-groups.js";
export { containerSteps, decodeGroupContainer, encodeGroupContainer, isGroupContainer } from "./group-container.js";
export { keyFilter } from "./key-filter.js";
