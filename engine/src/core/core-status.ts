/** The core's status view (design §11): log time, partitions, policies, state size. */
import type { EventTimeCore } from "./stream-core.js";
import type { CoreStatus } from "./types.js";
import type { Slice, Window } from "./window-state.js";
import { describeStrategy, type PartitionClock } from "./watermark.js";

export function coreStatus(core: EventTimeCore): CoreStatus {
  let stateBytes = 0;
  let stateKeys = 0;
  let openWindows = 0;
  for (let wc = 0; wc < core.specs.length; wc++) {
    openWindows += (core.windows[wc] as Map<number, Window>).size;
    for (const slice of (core.slices[wc] as Map<number, Slice>).values()) {
      for (const node of slice.services.values()) {
        stateKeys += 1 + (node.routes?.size ?? 0);
        stateBytes += node.agg.heapBytes();
        for (const r of node.routes?.values() ?? []) stateBytes += r.agg.heapBytes();
      }
    }
  }
  const orNull = (v: number): number | null => (Number.isFinite(v) ? v : null);
  return {
    logTime: orNull(core.logTime),
    partitions: core.parts.map((p, partition) => ({ partition, logTime: orNull(p.logTime), idle: p.idle })),
    policies: core.pols.map((p) => ({
      name: p.cfg.name,
      label: p.cfg.label,
      strategy: describeStrategy(p.cfg.watermark),
      graceMs: p.cfg.graceMs,
      mode: p.cfg.mode,
      watermark: orNull(core.watermarkOf(p)),
      lateAccepted: p.lateAccepted,
      dropped: p.dropped,
      bias: p.bias.current(),
      emitDelayMs: p.emitDelayCount === 0 ? null : p.emitDelaySum / p.emitDelayCount,
    })),
    openWindows,
    stateKeys,
    stateBytes,
    routesOverflowed: core.routes.overflowed,
    eventsTotal: core.eventsTotal,
    heldBackBy: heldBackBy(core.parts),
  };
}

/** Non-idle partition with the smallest log time (a silent one first), or null. */
function heldBackBy(parts: readonly PartitionClock[]): number | null {
  let best: number | null = null;
  let min = Infinity;
  parts.forEach((p, i) => {
    const t = p.spoken ? p.logTime : -Infinity;
    if (!p.idle && (best === null || t < min)) {
      best = i;
      min = t;
    }
  });
  return best;
}
