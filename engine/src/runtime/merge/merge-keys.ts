/**
 * A merge operator's core with what it emits kept to the keys of its own merge partition
 * (docs/decisions/0033-merge-partitions.md, docs/decisions/0057-elastic-workers.md). Its input holds
 * only its keys, so this changes nothing — except after a restore at another `mergePartitions`, when
 * its core holds the keys of the old merge partition it was split from: those now belong to
 * another operator, which emits them. With one merge partition the core is returned as it is.
 */
import { keyFilter } from "../../core/grouped/key-filter.js";
import type { PartialTick, StreamCore } from "../../core/types.js";
import { mergePartitionOf } from "../../protocol.js";

export function ownKeys(core: StreamCore, config: { mergePartition: number; mergePartitions: number }): StreamCore {
  const { mergePartition, mergePartitions } = config;
  if (mergePartitions <= 1) return core;
  const keep = keyFilter((service) => mergePartitionOf(service, mergePartitions) === mergePartition);
  return {
    event: (lane, e, out) => core.event(lane, e, keep(out)),
    heartbeat: (lane, t, out) => core.heartbeat(lane, t, keep(out)),
    partial: (tick: PartialTick, out) => core.partial?.(tick, keep(out)),
    finish: (out) => core.finish(keep(out)),
    status: () => core.status(),
    snapshot: () => core.snapshot(),
    ...(core.snapshotSteps ? { snapshotSteps: core.snapshotSteps.bind(core) } : {}),
    ...(core.delayQuantiles ? { delayQuantiles: core.delayQuantiles.bind(core) } : {}),
  };
}
