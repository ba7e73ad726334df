/**
 * The top-level `slos` section of tidemark.config.json (docs/slo.md, "Definitions"), validated once
 * at start against the config's policies and windows. Every error is TM_CONFIG_INVALID and names the
 * SLO (index and name) and the field.
 */
import { formatDuration, parseDuration, validateCoreConfig } from "@tidemark/engine/core";
import { ALL_SERVICES } from "@tidemark/engine/protocol";
import { DashboardError } from "../errors.js";
import type { RuleScope } from "../rules/index.js";

export type Severity = "page" | "ticket";

export type SloSli = "errors" | { readonly latencyAboveMs: number };

/** Distinct latency thresholds over all SLOs: the engine counts each exactly in every pane (a counted bound). */
export const MAX_LATENCY_THRESHOLDS = 8;

export interface SloTier {
  readonly severity: Severity;
  readonly longMs: number;
  readonly shortMs: number;
  /** Burn-rate threshold: the tier fires when both windows burn faster than this. */
  readonly factor: number;
}

export interface SloDefinition {
  readonly index: number;
  readonly name: string;
  /** A service name, or "*" for all services together. */
  readonly service: string;
  /** e.g. 0.999: the good fraction promised. */
  readonly objective: number;
  readonly periodMs: number;
  /** "errors": the error ratio; latency: the ratio of requests slower than `aboveMs` (docs/slo.md, "Latency SLI"). */
  readonly sli: SloSli;
  readonly policy: string;
  /** The window size of the panes summed into each burn-rate window: the config's smallest dividing them all. */
  readonly paneMs: number;
  /** The pane kind that settles a window of the SLO's policy: "on-time" when it has no final pane (grace 0). */
  readonly settledBy: "final" | "on-time";
  /** Below this many requests per hour (over a tier's long window) no tier fires. */
  readonly minRequestsPerHour: number;
  readonly tiers: readonly SloTier[];
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The SRE workbook's multi-window, multi-burn-rate tiers (docs/slo.md, "Tiers"). */
export const WORKBOOK_TIERS: readonly SloTier[] = Object.freeze([
  { severity: "page", longMs: 3_600_000, shortMs: 300_000, factor: 14.4 },
  { severity: "page", longMs: 6 * 3_600_000, shortMs: 1_800_000, factor: 6 },
  { severity: "ticket", longMs: 86_400_000, shortMs: 2 * 3_600_000, factor: 3 },
  { severity: "ticket", longMs: 3 * 86_400_000, shortMs: 6 * 3_600_000, factor: 1 },
]);

/** Labels and annotations tidemark sets on SLO alerts (docs/slo.md, "Alerts"). */
export const SLO_LABELS = ["alertname", "slo", "service", "severity", "policy"];
export const SLO_ANNOTATIONS = [
  "burn_rate_long",
  "burn_rate_short",
  "burn_rate_long_raw",
  "burn_rate_short_raw",
  "bias",
  "budget_remaining",
  "time_to_exhaustion",
  "long_window",
  "short_window",
  "factor",
  "may_flip",
  "provisional",
  "retracted",
  "resolved",
];

const KEYS = [
  "name",
  "service",
  "objective",
  "period",
  "sli",
  "policy",
  "minRequestsPerHour",
  "tiers",
  "labels",
  "annotations",
];
const TIER_KEYS = ["severity", "long", "short", "factor"];
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** SLOs per config: each holds its longest window of panes (a counted bound). */
export const MAX_SLOS = 100;
/** Panes a burn-rate window may sum: 3 days of 10 s panes fit. */
export const MAX_PANES_PER_WINDOW = 30_000;

/** Validates the section (undefined: no SLOs). */
/**
 * @param policies the config's raw `policies` (undefined: the defaults), for which of them has no
 *   final pane after its on-time one (grace 0): their on-time panes settle a window.
 */
export function parseSlos(
  raw: unknown,
  scope: RuleScope,
  source: string,
  policies?: unknown,
): readonly SloDefinition[] {
  if (raw === undefined || raw === null) return Object.freeze([]);
  const lastOnTime = onTimeIsLast(policies, source);
  const err = (path: string, what: string): DashboardError =>
    new DashboardError("TM_CONFIG_INVALID", `${source}: ${path} ${what}`);
  if (!Array.isArray(raw)) throw err("$.slos", `must be a list of SLOs, got ${JSON.stringify(raw)}`);
  if (raw.length > MAX_SLOS) throw err("$.slos", `holds ${raw.length} SLOs: at most ${MAX_SLOS}`);
  const out = raw.map((r, i) => {
    const s = slo(r, i, scope, err);
    return Object.freeze({ ...s, settledBy: lastOnTime.includes(s.policy) ? "on-time" : "final" } as const);
  });
  const names = new Set<string>();
  for (const s of out) {
    if (names.has(s.name))
      throw err(`$.slos[${s.index}].name`, `${JSON.stringify(s.name)} is used twice: SLO names must be unique`);
    names.add(s.name);
  }
  const thresholds = latencyThresholds(out);
  if (thresholds.length > MAX_LATENCY_THRESHOLDS) {
    const s = out.find((x) => typeof x.sli === "object" && x.sli.latencyAboveMs === thresholds[MAX_LATENCY_THRESHOLDS]);
    throw err(
      `$.slos[${s?.index}] (${JSON.stringify(s?.name)}).sli.latencyAboveMs`,
      `is the ${MAX_LATENCY_THRESHOLDS + 1}th distinct latency threshold (${thresholds.join(", ")} ms): at most ${MAX_LATENCY_THRESHOLDS}, share thresholds between SLOs`,
    );
  }
  return Object.freeze(out);
}

type Err = (path: string, what: string) => DashboardError;

function slo(raw: unknown, i: number, scope: RuleScope, err: Err): SloDefinition {
  const base = `$.slos[${i}]`;
  const r = object(raw, base, KEYS, err);
  if (typeof r["name"] !== "string" || !/^[A-Za-z0-9_.:-]+$/.test(r["name"]))
    throw err(`${base}.name`, `must be a name of letters, digits, _ . : -, got ${JSON.stringify(r["name"])}`);
  const name = r["name"];
  const at = (field: string): string => `${base} (${JSON.stringify(name)}).${field}`;
  const service = r["service"] ?? ALL_SERVICES;
  if (typeof service !== "string" || service === "")
    throw err(at("service"), `must be a service name, or "*" for all services, got ${JSON.stringify(service)}`);
  const objective = r["objective"];
  if (typeof objective !== "number" || !(objective > 0 && objective < 1))
    throw err(
      at("objective"),
      `must be a fraction between 0 and 1 such as 0.999 (99.9 %), got ${JSON.stringify(objective)}`,
    );
  const periodMs = duration(r["period"] ?? "30d", at("period"), err);
  const sli = sliOf(r["sli"], at("sli"), err);
  const policy = r["policy"] ?? scope.policies[0];
  if (typeof policy !== "string" || !scope.policies.includes(policy))
    throw err(
      at("policy"),
      `must name one of the config's policies (${scope.policies.join(", ")}), got ${JSON.stringify(policy)}`,
    );
  const floor = r["minRequestsPerHour"] ?? 0;
  if (typeof floor !== "number" || !Number.isFinite(floor) || floor < 0)
    throw err(at("minRequestsPerHour"), `must be a number of requests ≥ 0, got ${JSON.stringify(floor)}`);
  const tiers =
    r["tiers"] === undefined
      ? WORKBOOK_TIERS
      : list(r["tiers"], at("tiers"), err).map((t, k) => tier(t, `${at("tiers")}[${k}]`, err));
  if (tiers.length === 0) throw err(at("tiers"), "must hold at least one tier, or be left out for the workbook's four");
  const paneMs = paneSize(tiers, scope, at("tiers"), err);
  return Object.freeze({
    settledBy: "final",
    index: i,
    name,
    service,
    objective,
    periodMs,
    sli,
    policy,
    paneMs,
    minRequestsPerHour: floor,
    tiers: Object.freeze(tiers),
    labels: stringMap(r["labels"], at("labels"), SLO_LABELS, err),
    annotations: stringMap(r["annotations"], at("annotations"), SLO_ANNOTATIONS, err),
  });
}

/** Policies whose on-time pane is their last: not final-only, grace 0 (the engine's hasFinalPane). */
function onTimeIsLast(policies: unknown, source: string): string[] {
  try {
    return validateCoreConfig(policies === undefined ? {} : { policies }, "$")
      .policies.filter((p) => p.mode !== "final-only" && p.graceMs === 0)
      .map((p) => p.name);
  } catch (err) {
    throw new DashboardError("TM_CONFIG_INVALID", `${source}: ${(err as Error).message}`);
  }
}

/** The distinct latency thresholds of the SLOs (ms), in order of first use: the engine counts each. */
export function latencyThresholds(slos: readonly SloDefinition[]): number[] {
  const out: number[] = [];
  for (const s of slos)
    if (typeof s.sli === "object" && !out.includes(s.sli.latencyAboveMs)) out.push(s.sli.latencyAboveMs);
  return out;
}

function sliOf(v: unknown, path: string, err: Err): SloSli {
  if (v === undefined || v === "errors") return "errors";
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw err(path, `must be "errors" or { "latencyAboveMs": 300 }, got ${JSON.stringify(v)}`);
  const o = object(v, path, ["latencyAboveMs"], err);
  const ms = o["latencyAboveMs"];
  if (typeof ms !== "number" || !Number.isInteger(ms) || ms <= 0)
    throw err(
      `${path}.latencyAboveMs`,
      `must be a whole number of milliseconds > 0 such as 300, got ${JSON.stringify(ms)}`,
    );
  return Object.freeze({ latencyAboveMs: ms });
}

function tier(raw: unknown, path: string, err: Err): SloTier {
  const t = object(raw, path, TIER_KEYS, err);
  const severity = t["severity"];
  if (severity !== "page" && severity !== "ticket")
    throw err(`${path}.severity`, `must be "page" or "ticket", got ${JSON.stringify(severity)}`);
  const longMs = duration(t["long"], `${path}.long`, err);
  const shortMs = duration(t["short"], `${path}.short`, err);
  if (shortMs >= longMs) throw err(`${path}.short`, `must be shorter than long (${formatDuration(longMs)})`);
  const factor = t["factor"];
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor <= 0)
    throw err(`${path}.factor`, `must be a burn rate > 0 such as 14.4, got ${JSON.stringify(factor)}`);
  return Object.freeze({ severity, longMs, shortMs, factor });
}

/** The smallest window size of the config that divides every tier window, within the counted bound. */
function paneSize(tiers: readonly SloTier[], scope: RuleScope, path: string, err: Err): number {
  const spans = tiers.flatMap((t) => [t.longMs, t.shortMs]);
  const fits = [...scope.windowsMs].sort((a, b) => a - b).filter((w) => spans.every((s) => s % w === 0));
  const longest = Math.max(...spans);
  const size = fits.find((w) => longest / w <= MAX_PANES_PER_WINDOW);
  if (size === undefined)
    throw err(
      path,
      `need a window size of the config (${scope.windowsMs.map(formatDuration).join(", ")}) that divides every long and short window, ` +
        `with at most ${MAX_PANES_PER_WINDOW} of them in the longest: add such a window or change the tiers`,
    );
  return size;
}

function object(v: unknown, path: string, keys: readonly string[], err: Err): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw err(path, `must be an object, got ${JSON.stringify(v)}`);
  for (const k of Object.keys(v))
    if (!keys.includes(k)) throw err(`${path}.${k}`, `is not a known key: use one of ${keys.join(", ")}`);
  return v as Record<string, unknown>;
}

function list(v: unknown, path: string, err: Err): unknown[] {
  if (!Array.isArray(v)) throw err(path, `must be a list, got ${JSON.stringify(v)}`);
  return v;
}

function duration(v: unknown, path: string, err: Err): number {
  let ms: number | undefined;
  try {
    if (typeof v === "string") ms = parseDuration(v);
  } catch {
    ms = undefined;
  }
  if (ms === undefined || ms <= 0)
    throw err(path, `must be a duration such as "5m", "1h", "30d", got ${JSON.stringify(v)}`);
  return ms;
}

function stringMap(v: unknown, path: string, reserved: readonly string[], err: Err): Readonly<Record<string, string>> {
  if (v === undefined) return Object.freeze({});
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw err(path, `must be an object of strings, got ${JSON.stringify(v)}`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (!LABEL_NAME.test(k)) throw err(`${path}.${k}`, "is not a label name: letters, digits and _");
    if (reserved.includes(k))
      throw err(`${path}.${k}`, `is set by tidemark (${reserved.join(", ")}): use another name`);
    if (typeof x !== "string") throw err(`${path}.${k}`, `must be a string, got ${JSON.stringify(x)}`);
    out[k] = x;
  }
  return Object.freeze(out);
}
