/** Entry points: a fresh core, or one restored from a snapshot. */
import type { AggregateKind } from "./windows/aggregate.js";
import { newCoreState } from "./core-state.js";
import { sketchAggregates } from "./windows/sketch-aggregate.js";
import { thresholdAggregates } from "./windows/threshold-aggregate.js";
import { decodeCoreSnapshot } from "./snapshot/snapshot.js";
import { EventTimeCore } from "./stream-core.js";
import type { CoreConfig, StreamCore } from "./types.js";
import { validateCoreConfig } from "./validate-config.js";

function aggregatesFor(config: CoreConfig): AggregateKind {
  const thresholds = config.latencyThresholdsMs;
  if (thresholds.length > 0) return thresholdAggregates(config.relativeAccuracy, config.hllPrecision, thresholds);
  return sketchAggregates(config.relativeAccuracy, config.hllPrecision);
}

/** Core options not in the configuration (tests only). */
export interface CoreOptions {
  /**
   * Window configs share slice grids (default true; docs/decisions/0022-sliced-windows.md). Off,
   * every config keeps its own slices: the tests' check that sharing changes no pane.
   */
  readonly sharedSlices?: boolean;
}

/** A fresh core; the config is validated (and frozen) once here. */
export function createCore(config: CoreConfig, options: CoreOptions = {}): StreamCore {
  const cfg = validateCoreConfig(config);
  return new EventTimeCore(cfg, aggregatesFor(cfg), newCoreState(cfg, options.sharedSlices ?? true));
}

/**
 * A core restored from `snapshot()` bytes. Throws CoreError TM_SNAPSHOT_CORRUPT (truncated, bad
 * checksum), TM_SNAPSHOT_VERSION or TM_SNAPSHOT_CONFIG_MISMATCH.
 */
export function restoreCore(config: CoreConfig, snapshot: Uint8Array, options: CoreOptions = {}): StreamCore {
  const cfg = validateCoreConfig(config);
  const kind = aggregatesFor(cfg);
  return new EventTimeCore(cfg, kind, decodeCoreSnapshot(cfg, kind, snapshot, options.sharedSlices ?? true));
}

/** The aggregates of a config's cores (stage-1 partials and the merge stage decode and merge them). */
export function coreAggregates(config: CoreConfig): AggregateKind {
  return aggregatesFor(validateCoreConfig(config));
}

/** The distinct slice lengths of a config's slice grids: what stage-1 partials are cut by (partial-accumulator.ts). */
export function partialSliceLengths(config: CoreConfig): number[] {
  const state = newCoreState(validateCoreConfig(config));
  const lengths = state.windowConfigs.filter((c, i) => c.grid === i).map((c) => c.spec.sliceMs);
  return [...new Set(lengths)];
}
