/** The default configuration (docs/semantics.md, "Configuration"). */
import type { CoreConfig, PolicyConfig } from "./types.js";

/** dashboard / alerting / billing, exactly as listed in docs/semantics.md, "Configuration". */
export const DEFAULT_POLICIES: readonly PolicyConfig[] = Object.freeze([
  Object.freeze({
    name: "dashboard",
    label: "dashboard: 2 s, biased",
    watermark: Object.freeze({ kind: "arrival-lag", lagMs: 2_000 }),
    graceMs: 0,
    earlyEveryMs: 1_000,
    lateEveryMs: null,
    mode: "accumulating",
  }),
  Object.freeze({
    name: "alerting",
    label: "alerting: 10 s, final 40 s",
    watermark: Object.freeze({ kind: "arrival-lag", lagMs: 10_000 }),
    graceMs: 30_000,
    earlyEveryMs: 5_000,
    lateEveryMs: 1_000,
    mode: "retracting",
  }),
  Object.freeze({
    name: "billing",
    label: "billing: exact, 100 s",
    watermark: Object.freeze({ kind: "arrival-lag", lagMs: 10_000 }),
    graceMs: 90_000,
    earlyEveryMs: null,
    lateEveryMs: null,
    mode: "final-only",
  }),
] as PolicyConfig[]);

/** A fresh, mutable copy of the default configuration. */
export function defaultCoreConfig(): CoreConfig {
  return {
    partitions: 8,
    windows: [
      { kind: "tumbling", sizeMs: 10_000 },
      { kind: "tumbling", sizeMs: 60_000 },
    ],
    policies: DEFAULT_POLICIES.map((p) => ({ ...p, watermark: { ...p.watermark } })),
    referenceHorizonMs: 300_000,
    biasWindows: 30,
    serviceCap: 2000,
    routeCapPerService: 200,
    keyTtlMs: 3_600_000,
    idleTimeoutMs: 10_000,
    relativeAccuracy: 0.01,
    hllPrecision: 14,
    latencyThresholdsMs: [],
  };
}
