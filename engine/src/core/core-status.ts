/** The core's status view (docs/semantics.md, "Input contract"): log time, partitions, policies, state size. */
import { watermarkOf } from "./watermarks/clock-state.js";
import type { CoreState } from "./core-state.js";
import { dialStatus } from "./dial/dial-status.js";
import type { PolicyDial } from "./dial/policy-dial.js";
import type { PolicyState } from "./panes/policy-state.js";
import { heldBackBy, orNull, partitionStatuses, policyStatus } from "./status-parts.js";
import type { CoreConfig, CoreStatus } from "./types.js";
import type { Slice } from "./windows/window-state.js";

/** One slice's share of the state size, as of its `adds`. */
interface SliceSize {
  adds: number;
  keys: number;
  bytes: number;
}

/**
 * The last size measured per slice. A slice's keys and aggregates change only with an event added
 * to it, which counts `adds` (stream-core.ts), so a slice whose `adds` did not move since is not
 * walked again: `status()` costs O(slices) plus the keys of the slices that took events since the
 * last call, with the same values as a full walk (docs/decisions/0021-runtime-lean.md).
 */
const measured = new WeakMap<Slice, SliceSize>();

function sliceSize(slice: Slice): SliceSize {
  const known = measured.get(slice);
  if (known !== undefined && known.adds === slice.adds) return known;
  let keys = 0;
  let bytes = 0;
  for (const node of slice.services.values()) {
    keys += 1 + (node.routes?.size ?? 0);
    bytes += node.agg.heapBytes();
    if (node.routes !== null) for (const r of node.routes.values()) bytes += r.agg.heapBytes();
  }
  const size = { adds: slice.adds, keys, bytes };
  measured.set(slice, size);
  return size;
}

function stateSize(state: CoreState): { openWindows: number; stateKeys: number; stateBytes: number } {
  let stateBytes = 0;
  let stateKeys = 0;
  let openWindows = 0;
  for (const c of state.windowConfigs) {
    openWindows += c.windows.size;
    for (const slice of c.slices.values()) {
      const size = sliceSize(slice);
      stateKeys += size.keys;
      stateBytes += size.bytes;
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
