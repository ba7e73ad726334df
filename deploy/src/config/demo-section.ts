/** The `demo` section: the traffic `tidemark up` generates unless --no-demo. */
import type { Fields, Json } from "./fields.js";

export interface DemoSettings {
  readonly enabled: boolean;
  /** Events per second. */
  readonly rate: number;
  /** 0..1: lateness correlated with errors (see `tidemark demo --corr`). */
  readonly corr: number;
  readonly seed: number;
}

export const DEMO_KEYS = ["enabled", "rate", "corr", "seed"] as const;
export const DEMO_DEFAULTS: DemoSettings = Object.freeze({ enabled: true, rate: 500, corr: 0.25, seed: 1 });

export function readDemo(f: Fields, raw: unknown): DemoSettings {
  const s: Json = raw === undefined ? {} : f.object(raw, "$.demo", DEMO_KEYS);
  return Object.freeze({
    enabled: f.optional(s.enabled, (v) => f.boolean(v, "$.demo.enabled"), DEMO_DEFAULTS.enabled),
    rate: f.optional(s.rate, (v) => f.number(v, "$.demo.rate", 1, 1_000_000), DEMO_DEFAULTS.rate),
    corr: f.optional(s.corr, (v) => f.number(v, "$.demo.corr", 0, 1), DEMO_DEFAULTS.corr),
    seed: f.optional(s.seed, (v) => f.int(v, "$.demo.seed", 0, 2 ** 32 - 1), DEMO_DEFAULTS.seed),
  });
}
