/**
 * The core's settings at the top level of tidemark.config.json (docs/operations.md,
 * "Configuration"): validated by the core's own `validateCoreConfig`, read by the engine, the
 * merge operators and `tidemark up`. The partition count, which the file calls
 * `partitionCount`, is not among them: each role passes its own.
 */
export const CORE_KEYS = [
  "policies",
  "windows",
  "referenceHorizon",
  "biasWindows",
  "routeCapPerService",
  "serviceCap",
  "keyTtl",
  "relativeAccuracy",
  "hllPrecision",
] as const;

export type CoreKey = (typeof CORE_KEYS)[number];

/** The core's settings of a parsed config file, as `validateCoreConfig` takes them. */
export function coreSettingsOf(doc: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of CORE_KEYS) if (doc[k] !== undefined) out[k] = doc[k];
  return out;
}
