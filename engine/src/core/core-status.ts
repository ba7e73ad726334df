/** The core's status view (docs/semantics.md, "Input contract"): log time, partitions, policies, state size. */
import { watermarkOf } from "./clock-state.js";
import type { CoreState } from "./core-state.js";
import { dialStatus } from "./dial-status.js";
import type { PolicyDial } from "./policy-dial.js";
import type { PolicyState } from "./policy-state.js";
import { heldBackBy, orNull, partitionStatuses, policyStatus } from "./status-parts.js";
import type { CoreConfig, CoreStatus } from "./types.js";

function stateSize(state: CoreState): { openWindows: number; stateKeys: number; stateBytes: number } {
  let stateBytes = 0;
  let stateKeys = 0;
  let openWindows = 0;
  for (const c of state.windowConfigs) {
    openWindows += c.windows.size;
    for (const slice of c.slices.values()) {
      for (const node of slice.services.values()) {
        stateKeys += 1 + (node.routes?.size ?? 0);
        stateBytes += node.agg.heapBytes();
        for (const r of node.routes?.values() ?? []) stateBytes += r.agg.heapBytes();
      }
    }
  }
  return { openWindows, stateKeys, stateBytes };
}

/** The policy's dial per window config, the smallest size first (ties: config order). */
function dialsOf(state: CoreState, p: PolicyState): PolicyDial[] {
  return [...state.windowConfigs]
    .sort((a, b) => a.spec.sizeMs - b.spec.sizeMs || a.index - b.index)
    .map((c) => c.dials[p.index] as PolicyDial);
}

export function coreStatus(config: CoreConfig, state: CoreState): CoreStatus {
  const clock = state.clock;
  return {
    logTime: orNull(clock.logTime),
    partitions: partitionStatuses(clock, config.idleTimeoutMs),
    policies: clock.policies.map((p) => policyStatus(p, watermarkOf(clock, p), dialStatus(p, dialsOf(state, p)))),
    ...stateSize(state),
    overflow: { ...state.keys.overflow },
    eventsTotal: clock.eventsTotal,
    heldBackBy: heldBackBy(clock, config.idleTimeoutMs),
  };
}
