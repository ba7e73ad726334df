/**
 * Everything the window core holds, as one type (docs/decisions/0010-core-state-and-idleness.md):
 * the input clock (log time, partitions, policy progress), the key registry, and per window
 * config its slices (the shared aggregates) and windows (each policy's pane progress). `status()`
 * and the snapshot codec read it; restoring decodes one and builds the core around it. Timer queues
 * are not part of it: they are derived from the windows and rebuilt (their order is total).
 */
import { newClockState, type ClockState } from "./watermarks/clock-state.js";
import { KeyRegistry } from "./windows/key-registry.js";
import { newPolicyDial, type PolicyDial } from "./dial/policy-dial.js";
import type { CoreConfig } from "./types.js";
import { windowSpec, type WindowSpec } from "./windows/window-assigner.js";
import type { Slice, Window } from "./windows/window-state.js";

/** One configured window size (tumbling or sliding): its slices and open windows. */
export interface WindowConfigState {
  readonly index: number;
  readonly spec: WindowSpec;
  /**
   * Index of the config whose slice grid its windows are built from: itself, or the config with the
   * smallest slice that divides its own (docs/decisions/0022-sliced-windows.md).
   */
  readonly grid: number;
  /** A grid's own config: the configs built from its slices, itself included, in config order (else empty). */
  readonly sharers: readonly number[];
  /** Its windows' one slice belongs to no other window: their key nodes hold the tracks (window-state.ts). */
  readonly exclusive: boolean;
  /** Slice start → slice (empty unless it owns its grid). */
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

/**
 * `sharedSlices: false` gives every config its own grid (how tests check that sharing changes no
 * pane; the snapshot records the grids, so a core restores only into the same choice).
 */
export function newCoreState(config: CoreConfig, sharedSlices = true): CoreState {
  const smallest = smallestWindow(config);
  const specs = config.windows.map(windowSpec);
  const grids = specs.map((s, i) => (sharedSlices ? gridOf(specs, i) : i));
  return {
    clock: newClockState(config),
    keys: new KeyRegistry(config.serviceCap, config.routeCapPerService),
    windowConfigs: config.windows.map((w, index) => ({
      index,
      spec: specs[index] as WindowSpec,
      grid: grids[index] as number,
      sharers: grids.flatMap((g, j) => (g === index ? [j] : [])),
      exclusive: exclusiveIn(specs, grids, index),
      slices: new Map(),
      windows: new Map(),
      lastSlice: undefined,
      dials: config.policies.map(() => newPolicyDial(w.sizeMs, config.biasWindows, config.serviceCap)),
      countsLateness: index === smallest,
    })),
  };
}

/** The config with the smallest slice dividing config i's slice (the first of equals): its grid. */
export function gridOf(specs: readonly WindowSpec[], i: number): number {
  const own = (specs[i] as WindowSpec).sliceMs;
  let best = i;
  specs.forEach((s, j) => {
    const b = (specs[best] as WindowSpec).sliceMs;
    if (own % s.sliceMs === 0 && (s.sliceMs < b || (s.sliceMs === b && j < best))) best = j;
  });
  return best;
}

/** A tumbling config whose size is its grid's slice (the first such of the grid) owns its slices' key nodes' tracks. */
function exclusiveIn(specs: readonly WindowSpec[], grids: readonly number[], i: number): boolean {
  const tumblingOfSlice = (j: number): boolean => {
    const s = specs[j] as WindowSpec;
    return s.slideMs === s.sizeMs && s.sizeMs === (specs[grids[j] as number] as WindowSpec).sliceMs;
  };
  if (!tumblingOfSlice(i)) return false;
  for (let j = 0; j < i; j++) if (grids[j] === grids[i] && tumblingOfSlice(j)) return false;
  return true;
}

/** Index of the smallest window size (the first of equals). */
export function smallestWindow(config: CoreConfig): number {
  let best = 0;
  config.windows.forEach((w, i) => {
    if (w.sizeMs < (config.windows[best]?.sizeMs ?? Infinity)) best = i;
  });
  return best;
}
