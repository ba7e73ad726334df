/**
 * Everything the window core holds, as one type (docs/decisions/0010-core-state-and-idleness.md):
 * the input clock (log time, partitions, policy progress), the key registry, and per window
 * config its slices (the shared aggregates) and windows (each policy's pane progress). `status()`
 * and the snapshot codec read it; restoring decodes one and builds the core around it. Timer queues
 * are not part of it: they are derived from the windows and rebuilt (their order is total).
 */
import { newClockState, type ClockState } from "./clock-state.js";
import { KeyRegistry } from "./key-registry.js";
import { newPolicyDial, type PolicyDial } from "./policy-dial.js";
import type { CoreConfig } from "./types.js";
import { windowSpec, type WindowSpec } from "./window-assigner.js";
import type { Slice, Window } from "./window-state.js";

/** One configured window size (tumbling or sliding): its slices and open windows. */
export interface WindowConfigState {
  readonly index: number;
  readonly spec: WindowSpec;
  /** Slice start → slice. */
  readonly slices: Map<number, Slice>;
  /** Window start → window. */
  readonly windows: Map<number, Window>;
  /** The slice the last event went to (most events land in the current one); a cache, not persisted. */
  lastSlice: Slice | undefined;
  /** Per policy: its measured dial for this window size (docs/semantics.md, "Measured bias"). */
  readonly dials: PolicyDial[];
  /** The smallest window size (the first, on ties): its windows count late events per service. */
  readonly countsLateness: boolean;
}

export interface CoreState {
  readonly clock: ClockState;
  /** Services and routes that keep their names (caps + TTL), and the folded-event counters. */
  readonly keys: KeyRegistry;
  readonly windowConfigs: WindowConfigState[];
}

export function newCoreState(config: CoreConfig): CoreState {
  const smallest = smallestWindow(config);
  return {
    clock: newClockState(config),
    keys: new KeyRegistry(config.serviceCap, config.routeCapPerService),
    windowConfigs: config.windows.map((w, index) => ({
      index,
      spec: windowSpec(w),
      slices: new Map(),
      windows: new Map(),
      lastSlice: undefined,
      dials: config.policies.map(() => newPolicyDial(w.sizeMs, config.biasWindows, config.serviceCap)),
      countsLateness: index === smallest,
    })),
  };
}

/** Index of the smallest window size (the first of equals). */
export function smallestWindow(config: CoreConfig): number {
  let best = 0;
  config.windows.forEach((w, i) => {
    if (w.sizeMs < (config.windows[best]?.sizeMs ?? Infinity)) best = i;
  });
  return best;
}
