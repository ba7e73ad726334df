/** Entry points: a fresh core, or one restored from a snapshot. */
import type { AggregateKind } from "./aggregate.js";
import { sketchAggregates } from "./sketch-aggregate.js";
import { decodeCoreSnapshot } from "./snapshot.js";
import { EventTimeCore } from "./stream-core.js";
import type { CoreConfig, StreamCore } from "./types.js";
import { validateCoreConfig } from "./validate-config.js";

function aggregatesFor(config: CoreConfig): AggregateKind {
  return sketchAggregates(config.relativeAccuracy, config.hllPrecision);
}

/** A fresh core; the config is validated (and frozen) once here. */
export function createCore(config: CoreConfig): StreamCore {
  const cfg = validateCoreConfig(config);
  return new EventTimeCore(cfg, aggregatesFor(cfg));
}

/**
 * A core restored from `snapshot()` bytes. Throws CoreError TM_SNAPSHOT_CORRUPT (truncated, bad
 * checksum), TM_SNAPSHOT_VERSION or TM_SNAPSHOT_CONFIG_MISMATCH.
 */
export function restoreCore(config: CoreConfig, snapshot: Uint8Array): StreamCore {
  const cfg = validateCoreConfig(config);
  const kind = aggregatesFor(cfg);
  return new EventTimeCore(cfg, kind, decodeCoreSnapshot(cfg, kind, snapshot));
}
