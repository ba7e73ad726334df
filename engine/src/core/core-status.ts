/** The core's status view (docs/semantics.md, "Input contract"): log time, partitions, policies, state size. */
import { heldBackBy, orNull, partitionStatuses, policyStatus } from "./status-parts.js";
import type { EventTimeCore } from "./stream-core.js";
import type { CoreStatus } from "./types.js";
import type { Slice, Window } from "./window-state.js";

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
  return {
    logTime: orNull(core.logTime),
    partitions: partitionStatuses(core.parts),
    policies: core.pols.map((p) => policyStatus(p, core.watermarkOf(p))),
    openWindows,
    stateKeys,
    stateBytes,
    routesOverflowed: core.routes.overflowed,
    eventsTotal: core.eventsTotal,
    heldBackBy: heldBackBy(core.parts),
  };
}
