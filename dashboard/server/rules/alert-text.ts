/**
 * What an alert says about itself (docs/operations.md, "Alerts"): its labels, and annotations with
 * the value, the threshold, the pane kind, the measured bias of its policy for its service with the
 * interval, the emit delay, and "may flip" when the value moved by that bias lies on both sides of
 * the threshold. Retracted and resolved alerts say which pane ended them.
 */
import type { Labels } from "../promql/index.js";
import { formatDuration } from "../../protocol/number-text.js";
import { biasText, figure, formatSample, shownBias } from "./bias-text.js";
import type { Nowcast } from "./nowcast-judge.js";
import type { Reading } from "./rule-reading.js";
import { holds, type RuleShape } from "./rule-shape.js";
import { windowLabel } from "../prom/pane-samples.js";

/** The rule as written in the config, with its parsed shape. */
export interface AlertRule {
  /** Position in `alerts.rules`. */
  readonly index: number;
  readonly alert: string;
  readonly expr: string;
  readonly forMs: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly shape: RuleShape;
}

/** Annotations tidemark writes; a rule may not set them. */
export const OWN_ANNOTATIONS = [
  "value",
  "threshold",
  "pane_kind",
  "window_start",
  "bias",
  "emit_delay",
  "may_flip",
  "nowcast",
  "provisional",
  "retracted",
  "resolved",
] as const;
/** Labels tidemark sets from the series and the rule; a rule may not set them. */
export const OWN_LABELS = ["alertname", "policy", "window", "service"] as const;

/** The series' labels, the rule's labels, alertname, policy and window. */
export function alertLabels(rule: AlertRule, series: Labels): Record<string, string> {
  return {
    ...series,
    ...rule.labels,
    alertname: rule.alert,
    policy: rule.shape.policy,
    window: windowLabel(rule.shape.windowMs),
  };
}

export function thresholdText(shape: RuleShape): string {
  return `${shape.op} ${formatSample(shape.threshold)}`;
}

/**
 * True when the value moved by the measured bias — its size plus its 95 % half-width, either way —
 * lies on both sides of the threshold. Only for values in the metric's unit (a selector or a
 * `*_over_time` of one); pp are absolute (a ratio's 0.01 per pp), % are relative to the value.
 */
export function mayFlip(
  shape: RuleShape,
  r: Pick<Reading, "value" | "bias"> & Partial<Pick<Reading, "nowcast">>,
): string | null {
  if (r.nowcast) return nowcastFlip(shape, r.nowcast);
  const field = shape.biasField;
  if (!shape.plain || field === undefined) return null;
  const shown = shownBias(r.bias, field);
  if (shown === null) return null;
  const size = (Math.abs(shown.value) + (shown.spread ?? 0)) / 100;
  const reach = shown.unit === "pp" ? size : Math.abs(r.value) * size;
  const sides = [r.value - reach, r.value, r.value + reach].map((v) => holds(shape.op, v, shape.threshold));
  if (sides.every((s) => s === sides[0])) return null;
  return (
    `may flip: bias ${figure(shown)} (${formatSample(r.value)} \u00b1 ${formatSample(reach)} lies on both sides of ` +
    `${formatSample(shape.threshold)})`
  );
}

/** An early pane judged on its nowcast: may flip when the nowcast's interval straddles the threshold. */
function nowcastFlip(shape: RuleShape, n: Nowcast): string | null {
  if (n.halfWidth === null) return null;
  const sides = [n.value - n.halfWidth, n.value + n.halfWidth].map((v) => holds(shape.op, v, shape.threshold));
  if (sides[0] === sides[1]) return null;
  return (
    `may flip: nowcast ${formatSample(n.value)} \u00b1 ${formatSample(n.halfWidth)} lies on both sides of ` +
    `${formatSample(shape.threshold)}`
  );
}

/** The annotations of an alert at a reading: the rule's (templated), then tidemark's own. */
export function alertAnnotations(rule: AlertRule, r: Reading): Record<string, string> {
  const own: Record<string, string> = {
    value: formatSample(r.value),
    threshold: thresholdText(rule.shape),
    pane_kind: r.kind,
    window_start: new Date(r.end - rule.shape.windowMs).toISOString(),
    bias: biasText(r.bias, rule.shape.biasField),
    emit_delay: `${formatDuration(r.emitDelayMs)} after the window's end (log time) + ${formatDuration(r.pipelineLagMs)} pipeline`,
  };
  const flip = mayFlip(rule.shape, r);
  if (flip !== null) own["may_flip"] = flip;
  if (r.nowcast)
    own["nowcast"] =
      `${formatSample(r.nowcast.value)}${r.nowcast.halfWidth === null ? "" : ` \u00b1 ${formatSample(r.nowcast.halfWidth)}`}` +
      " (the early pane corrected by the bias measured for its kind and age; judged on it)";
  if (r.provisional)
    own["provisional"] =
      "early pane judged on its raw value: no bias measured yet for its kind and age for this service";
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rule.annotations)) out[k] = template(v, r);
  if (out["summary"] === undefined) out["summary"] = summary(rule, r);
  return { ...out, ...own };
}

/** Why a firing alert was retracted: raised on early panes, contradicted by a settled pane. */
export function retractedText(rule: AlertRule, raised: Reading, by: Reading): string {
  return (
    `retracted: raised on the ${raised.kind} pane of the window ending ${clock(raised.end)} ` +
    `(${formatSample(raised.value)} ${thresholdText(rule.shape)}); the ${by.kind} pane of the window ending ` +
    `${clock(by.end)} shows ${formatSample(by.value)}, which does not cross it`
  );
}

export function resolvedText(rule: AlertRule, by: Reading | "stale", staleMs: number): string {
  if (by === "stale") return `resolved: no pane of this series for ${formatDuration(staleMs)} of window time`;
  return (
    `resolved: the ${by.kind} pane of the window ending ${clock(by.end)} shows ${formatSample(by.value)}, ` +
    `not ${thresholdText(rule.shape)}`
  );
}

function summary(rule: AlertRule, r: Reading): string {
  const who = r.labels["service"]
    ? ` of ${r.labels["service"]}${r.labels["route"] ? ` ${r.labels["route"]}` : ""}`
    : "";
  const metric = rule.shape.metric ?? "the expression";
  return (
    `${metric}${who} is ${formatSample(r.value)} ${thresholdText(rule.shape)} ` +
    `(${rule.shape.policy} policy, ${windowLabel(rule.shape.windowMs)} windows, ${r.kind} pane)`
  );
}

/** `{{ $value }}` and `{{ $labels.name }}`, as in Prometheus rule annotations. */
function template(text: string, r: Reading): string {
  return text
    .replace(/\{\{\s*\$value\s*\}\}/g, formatSample(r.value))
    .replace(/\{\{\s*\$labels\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_m, name: string) => r.labels[name] ?? "");
}

function clock(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}
