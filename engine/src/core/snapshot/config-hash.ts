/**
 * The config a snapshot's config CRC is taken of (docs/semantics.md, "Snapshot"): without latency
 * thresholds it is the config as it was before they existed, so snapshots written then still
 * restore; with thresholds they are part of it (the aggregates' bytes carry their counts).
 */
import type { CoreConfig } from "../types.js";

export function hashedConfig(config: CoreConfig): unknown {
  if (config.latencyThresholdsMs.length > 0) return config;
  const { latencyThresholdsMs: _none, ...rest } = config;
  return rest;
}
