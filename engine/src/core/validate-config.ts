/**
 * The one validator of core configuration (policies, windows, state limits): used by the engine
 * role, by `tidemark frontier` and for tidemark.config.json. Missing fields take the defaults;
 * durations are "10s"-style strings or milliseconds. Every error names the field's path.
 */
import { defaultCoreConfig } from "./default-config.js";
import { configDuration } from "./duration.js";
import { ConfigError } from "./errors.js";
import type { AccumulationMode, CoreConfig, PolicyConfig, WatermarkStrategyConfig, WindowConfig } from "./types.js";

const NAME = /^[a-z0-9_-]+$/;
const MODES: readonly AccumulationMode[] = ["accumulating", "discarding", "retracting", "final-only"];
const STRATEGIES = ["arrival-lag", "bounded", "percentile", "perfect"] as const;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function pick(o: Obj, names: readonly string[]): unknown {
  for (const n of names) if (o[n] !== undefined) return o[n];
  return undefined;
}

function duration(v: unknown, path: string, positive = false): number {
  const ms = configDuration(v, path, "10s");
  if (positive && ms <= 0) throw new ConfigError(path, `must be greater than 0, got ${JSON.stringify(v)}`);
  return ms;
}

function optionalDuration(v: unknown, path: string): number | null {
  return v === undefined || v === null || v === false ? null : duration(v, path, true);
}

function integer(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
    throw new ConfigError(path, `expected a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return v;
}

function watermark(v: unknown, path: string): WatermarkStrategyConfig {
  if (!isObj(v)) throw new ConfigError(path, `expected an object {"kind": ${STRATEGIES.join("|")}, ...}`);
  const kind = v.kind;
  if (kind === "arrival-lag" || kind === "bounded" || kind === "perfect")
    return { kind, lagMs: duration(pick(v, ["lagMs", "lag"]) ?? 0, `${path}.lag`) };
  if (kind === "percentile") {
    const q = v.q;
    if (typeof q !== "number" || !(q > 0 && q < 1))
      throw new ConfigError(`${path}.q`, `expected a quantile strictly between 0 and 1, got ${JSON.stringify(q)}`);
    return { kind, q, sample: integer(v.sample ?? 2000, `${path}.sample`, 1, 1_000_000) };
  }
  throw new ConfigError(`${path}.kind`, `expected one of ${STRATEGIES.join(", ")}, got ${JSON.stringify(kind)}`);
}

function policy(v: unknown, path: string): PolicyConfig {
  if (!isObj(v)) throw new ConfigError(path, "expected a policy object {name, watermark, grace, mode, ...}");
  const name = v.name;
  if (typeof name !== "string" || !NAME.test(name))
    throw new ConfigError(`${path}.name`, `expected a name of [a-z0-9_-]+, got ${JSON.stringify(name)}`);
  const mode = v.mode ?? "accumulating";
  if (typeof mode !== "string" || !MODES.includes(mode as AccumulationMode))
    throw new ConfigError(`${path}.mode`, `expected one of ${MODES.join(", ")}, got ${JSON.stringify(mode)}`);
  const label = v.label ?? name;
  if (typeof label !== "string") throw new ConfigError(`${path}.label`, "expected a string");
  return {
    name,
    label,
    watermark: watermark(v.watermark, `${path}.watermark`),
    graceMs: duration(pick(v, ["graceMs", "grace"]) ?? 0, `${path}.grace`),
    earlyEveryMs: optionalDuration(pick(v, ["earlyEveryMs", "earlyEvery"]), `${path}.earlyEvery`),
    lateEveryMs: optionalDuration(pick(v, ["lateEveryMs", "lateEvery"]), `${path}.lateEvery`),
    mode: mode as AccumulationMode,
  };
}

function window(v: unknown, path: string): WindowConfig {
  if (typeof v === "string" || typeof v === "number") return { kind: "tumbling", sizeMs: duration(v, path, true) };
  if (!isObj(v)) throw new ConfigError(path, `expected "60s" or {"kind": "tumbling"|"sliding", "size", "slide"}`);
  const sizeMs = duration(pick(v, ["sizeMs", "size"]), `${path}.size`, true);
  if (v.kind === "tumbling") return { kind: "tumbling", sizeMs };
  if (v.kind !== "sliding")
    throw new ConfigError(`${path}.kind`, `expected "tumbling" or "sliding", got ${JSON.stringify(v.kind)}`);
  const slideMs = duration(pick(v, ["slideMs", "slide"]), `${path}.slide`, true);
  if (slideMs > sizeMs) throw new ConfigError(`${path}.slide`, `must not exceed the size (${sizeMs} ms)`);
  return { kind: "sliding", sizeMs, slideMs };
}

function list<T>(v: unknown, path: string, item: (x: unknown, p: string) => T): T[] {
  if (!Array.isArray(v) || v.length === 0) throw new ConfigError(path, "expected a non-empty array");
  return v.map((x, i) => item(x, `${path}[${i}]`));
}

function unique(values: readonly (string | number)[], path: string, what: string): void {
  const seen = new Set<string | number>();
  values.forEach((v, i) => {
    if (seen.has(v))
      throw new ConfigError(`${path}[${i}]`, `duplicate ${what} ${JSON.stringify(v)}: each must be unique`);
    seen.add(v);
  });
}

/** Largest lag + grace of any policy with a lag (the reference must outlive it: docs/semantics.md, "Measured bias"). */
export function largestLagPlusGrace(policies: readonly PolicyConfig[]): number {
  let m = 0;
  for (const p of policies) if (p.watermark.kind !== "percentile") m = Math.max(m, p.watermark.lagMs + p.graceMs);
  return m;
}

/** Validates and freezes a core configuration; fields left out take defaultCoreConfig()'s values. */
export function validateCoreConfig(input: unknown, path = "config"): CoreConfig {
  if (input === undefined || input === null) input = {};
  if (!isObj(input)) throw new ConfigError(path, "expected an object");
  const d = defaultCoreConfig();
  const o = input;
  const policies = o.policies === undefined ? d.policies : list(o.policies, `${path}.policies`, policy);
  unique(
    policies.map((p) => p.name),
    `${path}.policies`,
    "policy name",
  );
  const windows = o.windows === undefined ? d.windows : list(o.windows, `${path}.windows`, window);
  unique(
    windows.map((w) => w.sizeMs),
    `${path}.windows`,
    "window size",
  );
  const horizon =
    pick(o, ["referenceHorizonMs", "referenceHorizon"]) === undefined
      ? d.referenceHorizonMs
      : duration(pick(o, ["referenceHorizonMs", "referenceHorizon"]), `${path}.referenceHorizon`);
  const cfg: CoreConfig = {
    partitions: integer(o.partitions ?? d.partitions, `${path}.partitions`, 1, 4096),
    windows,
    policies,
    referenceHorizonMs: Math.max(horizon, largestLagPlusGrace(policies)),
    ...stateLimits(o, d, path),
  };
  return deepFreeze(cfg);
}

/** Bias, cardinality, TTL, idleness and sketch settings. */
function stateLimits(
  o: Obj,
  d: CoreConfig,
  path: string,
): Omit<CoreConfig, "partitions" | "windows" | "policies" | "referenceHorizonMs"> {
  const acc = o.relativeAccuracy ?? d.relativeAccuracy;
  if (typeof acc !== "number" || !(acc > 0 && acc < 1))
    throw new ConfigError(
      `${path}.relativeAccuracy`,
      `expected a number strictly between 0 and 1, got ${JSON.stringify(acc)}`,
    );
  return {
    biasWindows: integer(o.biasWindows ?? d.biasWindows, `${path}.biasWindows`, 1, 100_000),
    serviceCap: integer(o.serviceCap ?? d.serviceCap, `${path}.serviceCap`, 1, 1_000_000),
    routeCapPerService: integer(
      o.routeCapPerService ?? d.routeCapPerService,
      `${path}.routeCapPerService`,
      1,
      1_000_000,
    ),
    keyTtlMs: duration(pick(o, ["keyTtlMs", "keyTtl"]) ?? d.keyTtlMs, `${path}.keyTtl`, true),
    idleTimeoutMs: duration(pick(o, ["idleTimeoutMs", "idleTimeout"]) ?? d.idleTimeoutMs, `${path}.idleTimeout`, true),
    relativeAccuracy: acc,
    hllPrecision: integer(o.hllPrecision ?? d.hllPrecision, `${path}.hllPrecision`, 4, 18),
    latencyThresholdsMs: latencyThresholds(o.latencyThresholdsMs, `${path}.latencyThresholdsMs`),
  };
}

/** At most this many latency thresholds: each costs a count per aggregate and a comparison per event. */
export const MAX_LATENCY_THRESHOLDS = 8;

/** Positive whole milliseconds, ascending, each once, at most MAX_LATENCY_THRESHOLDS (docs/semantics.md, "Latency thresholds"). */
function latencyThresholds(v: unknown, path: string): number[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > MAX_LATENCY_THRESHOLDS)
    throw new ConfigError(
      path,
      `expected an array of at most ${MAX_LATENCY_THRESHOLDS} thresholds in ms, got ${JSON.stringify(v)}`,
    );
  const out = v.map((x, i) => integer(x, `${path}[${i}]`, 1, 2 ** 31 - 1));
  out.forEach((x, i) => {
    if (i > 0 && x <= (out[i - 1] as number))
      throw new ConfigError(
        `${path}[${i}]`,
        `expected thresholds in ascending order, each once; got ${x} after ${out[i - 1]}`,
      );
  });
  return out;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
