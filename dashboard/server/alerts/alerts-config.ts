/**
 * The `alerts` section of tidemark.config.json (docs/operations.md, "Alerts"), validated once at
 * start: Alertmanagers, delivery timing and the rules, in the Prometheus rule shape with `expr` in
 * PromQL (docs/prometheus-api.md). Every error is TM_CONFIG_INVALID and names the rule (index and alert name)
 * and the field.
 */
import { parseDuration, validateCoreConfig } from "@tidemark/engine/core";
import { DashboardError } from "../errors.js";
import { parsePromql } from "../promql/index.js";
import { OWN_ANNOTATIONS, OWN_LABELS, ruleShape, type AlertRule, type RuleScope } from "../rules/index.js";

export interface AlertsConfig {
  /** Alertmanager base URLs; each gets every alert (`POST <url>/api/v2/alerts`). */
  readonly alertmanagers: readonly string[];
  /** The dashboard's URL as users reach it, for `generatorURL`; null: the URL it listens on. */
  readonly externalUrl: string | null;
  /** Firing alerts are sent again this often, with endsAt 4 × this ahead. */
  readonly resendMs: number;
  /** A resolution is sent again for this long. */
  readonly resolvedResendMs: number;
  /** Alerts waiting per Alertmanager while it is down; past it the oldest are dropped (counted). */
  readonly queueSize: number;
  readonly rules: readonly AlertRule[];
}

const KEYS = ["alertmanagers", "externalUrl", "resendEvery", "resolvedResendFor", "queueSize", "rules"];
const RULE_KEYS = ["alert", "expr", "for", "labels", "annotations"];
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const NO_ALERTS: AlertsConfig = Object.freeze({
  alertmanagers: [],
  externalUrl: null,
  resendMs: 30_000,
  resolvedResendMs: 15 * 60_000,
  queueSize: 10_000,
  rules: [],
});

const validated = new WeakSet<AlertsConfig>([NO_ALERTS]);

/** True for a section this module validated (a layer may carry one, or raw JSON). */
export function isAlertsConfig(v: unknown): v is AlertsConfig {
  return typeof v === "object" && v !== null && validated.has(v as AlertsConfig);
}

/** The policies and window sizes of a config document (its `policies` and `windows`, else the defaults). */
export function scopeOf(root: Record<string, unknown>, source: string): RuleScope {
  const input: Record<string, unknown> = {};
  for (const k of ["policies", "windows"]) if (root[k] !== undefined) input[k] = root[k];
  try {
    const core = validateCoreConfig(input, "$");
    return { policies: core.policies.map((p) => p.name), windowsMs: core.windows.map((w) => w.sizeMs) };
  } catch (err) {
    throw new DashboardError("TM_CONFIG_INVALID", `${source}: ${(err as Error).message}`);
  }
}

/** Validates the section (undefined: no alerts). */
export function parseAlerts(raw: unknown, scope: RuleScope, source: string): AlertsConfig {
  if (raw === undefined || raw === null) return NO_ALERTS;
  const at = new Fields(source);
  const s = at.object(raw, "$.alerts", KEYS);
  const rules = at.optional(s["rules"], (v) => at.list(v, "$.alerts.rules"), []);
  const out: AlertsConfig = Object.freeze({
    alertmanagers: Object.freeze(at.optional(s["alertmanagers"], (v) => urls(at, v, "$.alerts.alertmanagers"), [])),
    externalUrl: at.optional(s["externalUrl"], (v) => url(at, v, "$.alerts.externalUrl"), null),
    resendMs: at.optional(s["resendEvery"], (v) => at.duration(v, "$.alerts.resendEvery", 100), 30_000),
    resolvedResendMs: at.optional(
      s["resolvedResendFor"],
      (v) => at.duration(v, "$.alerts.resolvedResendFor", 0),
      15 * 60_000,
    ),
    queueSize: at.optional(s["queueSize"], (v) => at.int(v, "$.alerts.queueSize", 1, 10_000_000), 10_000),
    rules: Object.freeze(rules.map((r, i) => rule(at, r, i, scope))),
  });
  validated.add(out);
  return out;
}

/** The section with Alertmanagers and the external URL from the environment or flags on top. */
export function withAlertOverrides(
  alerts: AlertsConfig,
  over: { alertmanagers?: unknown; externalUrl?: unknown },
  source: string,
): AlertsConfig {
  if (over.alertmanagers === undefined && over.externalUrl === undefined) return alerts;
  const at = new Fields(source);
  const list = (v: unknown): unknown =>
    typeof v === "string"
      ? v
          .split(",")
          .map((x) => x.trim())
          .filter((x) => x !== "")
      : v;
  const out: AlertsConfig = Object.freeze({
    ...alerts,
    ...(over.alertmanagers === undefined
      ? {}
      : { alertmanagers: Object.freeze(urls(at, list(over.alertmanagers), "alertmanagers")) }),
    ...(over.externalUrl === undefined ? {} : { externalUrl: url(at, over.externalUrl, "externalUrl") }),
  });
  validated.add(out);
  return out;
}

function rule(at: Fields, raw: unknown, i: number, scope: RuleScope): AlertRule {
  const base = `$.alerts.rules[${i}]`;
  const r = at.object(raw, base, RULE_KEYS);
  const name = at.string(r["alert"], `${base}.alert`);
  const path = (field: string): string => `${base} (${JSON.stringify(name)}).${field}`;
  const text = at.string(r["expr"], path("expr"));
  let shape;
  try {
    shape = ruleShape(parsePromql(text), scope);
  } catch (err) {
    throw at.error(path("expr"), `${(err as Error).message}; got ${JSON.stringify(text)}`);
  }
  return Object.freeze({
    index: i,
    alert: name,
    expr: text,
    forMs: at.optional(r["for"], (v) => at.duration(v, path("for"), 0), 0),
    labels: at.optional(r["labels"], (v) => at.stringMap(v, path("labels"), OWN_LABELS), {}),
    annotations: at.optional(r["annotations"], (v) => at.stringMap(v, path("annotations"), OWN_ANNOTATIONS), {}),
    shape,
  });
}

function urls(at: Fields, v: unknown, path: string): string[] {
  return at.list(v, path).map((u, i) => url(at, u, `${path}[${i}]`));
}

function url(at: Fields, v: unknown, path: string): string {
  const s = at.string(v, path);
  let u: URL | undefined;
  try {
    u = new URL(s);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:"))
    throw at.error(path, `must be an http(s) URL such as "http://127.0.0.1:9093", got ${JSON.stringify(s)}`);
  return s.replace(/\/+$/, "");
}

/** Field readers that throw TM_CONFIG_INVALID naming the source and the JSON path. */
class Fields {
  constructor(private readonly source: string) {}

  error(path: string, what: string): DashboardError {
    return new DashboardError("TM_CONFIG_INVALID", `${this.source}: ${path} ${what}`);
  }

  object(v: unknown, path: string, keys: readonly string[]): Record<string, unknown> {
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw this.error(path, `must be an object, got ${JSON.stringify(v)}`);
    for (const k of Object.keys(v))
      if (!keys.includes(k)) throw this.error(`${path}.${k}`, `is not a known key: use one of ${keys.join(", ")}`);
    return v as Record<string, unknown>;
  }

  list(v: unknown, path: string): unknown[] {
    if (!Array.isArray(v)) throw this.error(path, `must be a list, got ${JSON.stringify(v)}`);
    return v;
  }

  string(v: unknown, path: string): string {
    if (typeof v !== "string" || v.trim() === "")
      throw this.error(path, `must be a non-empty string, got ${JSON.stringify(v)}`);
    return v;
  }

  int(v: unknown, path: string, min: number, max: number): number {
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
      throw this.error(path, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return v;
  }

  duration(v: unknown, path: string, minMs: number): number {
    let ms: number | undefined;
    try {
      if (typeof v === "string" || typeof v === "number") ms = parseDuration(v);
    } catch {
      ms = undefined;
    }
    if (ms === undefined || ms < minMs)
      throw this.error(
        path,
        `must be a duration of at least ${minMs} ms such as "0s", "30s", "5m", got ${JSON.stringify(v)}`,
      );
    return ms;
  }

  /** Label names to strings; `reserved` names are set by tidemark. */
  stringMap(v: unknown, path: string, reserved: readonly string[]): Record<string, string> {
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw this.error(path, `must be an object of strings, got ${JSON.stringify(v)}`);
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(v)) {
      if (!LABEL_NAME.test(k)) throw this.error(`${path}.${k}`, "is not a label name: letters, digits and _");
      if (reserved.includes(k))
        throw this.error(`${path}.${k}`, `is set by tidemark (${reserved.join(", ")}): use another name`);
      if (typeof x !== "string") throw this.error(`${path}.${k}`, `must be a string, got ${JSON.stringify(x)}`);
      out[k] = x;
    }
    return Object.freeze(out);
  }

  optional<T>(v: unknown, read: (v: unknown) => T, fallback: T): T {
    return v === undefined ? fallback : read(v);
  }
}
