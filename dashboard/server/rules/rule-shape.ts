/**
 * What an alert rule's expression must look like (docs/operations.md, "Alerts"): an instant vector
 * compared with a number, `tidemark_error_ratio{policy="alerting",window="10s"} > 0.05`, every
 * selector naming one policy and one window size of the config. The number is the threshold the
 * alert's annotations are stated against; the policy and window are the panes that drive it.
 */
import { parseDuration } from "@tidemark/engine/core";
import type { ComparisonOp, Expr, SelectorExpr } from "../promql/ast.js";
import { evaluateInstant, METRIC_NAME, typeOf, type Matcher } from "../promql/index.js";
import { METRICS, type BiasField } from "../prom/metric-catalog.js";
import { windowLabel } from "../prom/pane-samples.js";

export interface RuleShape {
  /** The compared instant vector (the threshold's other side). */
  readonly vector: Expr;
  /** Normalized so that the alert holds when `value op threshold`. */
  readonly op: ComparisonOp;
  readonly threshold: number;
  readonly policy: string;
  readonly windowMs: number;
  /** The metric of the first selector, when named with `=`. */
  readonly metric: string | undefined;
  /** The `quantile` the first selector names (latency rules). */
  readonly quantile: string | undefined;
  /** Session panes rather than window panes. */
  readonly sessions: boolean;
  /** The measured bias that fits the metric (docs/prometheus-api.md, "Metrics"), if any. */
  readonly biasField: BiasField | undefined;
  /** The vector's values are in the metric's own unit (a selector or *_over_time of one): the bias applies to them. */
  readonly plain: boolean;
  /** The longest range selector: an evaluation at t reads windows back to t − rangeMs. */
  readonly rangeMs: number;
  /** Each selector's matchers but `pane_kind`: the panes the rule reads (the metric's name says their level). */
  readonly selects: ReadonlyArray<readonly Matcher[]>;
}

/** The config's policies and window sizes a rule may name. */
export interface RuleScope {
  readonly policies: readonly string[];
  readonly windowsMs: readonly number[];
}

const FLIP: Record<ComparisonOp, ComparisonOp> = { ">": "<", "<": ">", ">=": "<=", "<=": ">=", "==": "==", "!=": "!=" };
const EXAMPLE = 'tidemark_error_ratio{policy="alerting", window="10s"} > 0.05';

/** The shape of a parsed expression, or an Error saying what to write instead. */
export function ruleShape(expr: Expr, scope: RuleScope): RuleShape {
  if (expr.type !== "binary" || !["==", "!=", ">", "<", ">=", "<="].includes(expr.op))
    throw new Error(`must compare an instant vector with a number, e.g. ${EXAMPLE}`);
  if (expr.bool) throw new Error("may not use bool: the comparison filters the series that alert");
  const lhsNumber = constant(expr.lhs);
  const rhsNumber = constant(expr.rhs);
  if ((lhsNumber === undefined) === (rhsNumber === undefined))
    throw new Error(`must compare an instant vector with a number (the threshold), e.g. ${EXAMPLE}`);
  const vector = lhsNumber === undefined ? expr.lhs : expr.rhs;
  const threshold = (lhsNumber ?? rhsNumber) as number;
  if (!Number.isFinite(threshold)) throw new Error(`threshold must be a finite number, got ${threshold}`);
  const selectors = selectorsOf(vector);
  const first = selectors[0];
  if (!first) throw new Error(`must select tidemark series, e.g. ${EXAMPLE}`);
  const policy = samePin(selectors, "policy", (v) => knownPolicy(v, scope));
  const windowMs = samePin(selectors, "window", (v) => knownWindow(v, scope));
  const metric = equalTo(first, METRIC_NAME);
  const defs = METRICS.filter((d) => d.name === metric);
  if (metric !== undefined && defs.length === 0)
    throw new Error(`unknown metric ${metric}: see docs/prometheus-api.md, "Metrics"`);
  const quantile = equalTo(first, "quantile");
  const def = defs.find((d) => d.quantile === quantile) ?? defs[0];
  return {
    vector,
    op: lhsNumber === undefined ? (expr.op as ComparisonOp) : FLIP[expr.op as ComparisonOp],
    threshold,
    policy: policy.value,
    windowMs: windowMs.value,
    metric,
    quantile,
    sessions: def?.sessions ?? false,
    biasField: def?.bias[0],
    plain: isPlain(vector),
    rangeMs: Math.max(0, ...rangesOf(vector)),
    selects: selectors.map((s) => s.matchers.filter((m) => m.name !== "pane_kind")),
  };
}

/** True when `value op threshold` holds (NaN never does). */
export function holds(op: ComparisonOp, value: number, threshold: number): boolean {
  switch (op) {
    case ">":
      return value > threshold;
    case "<":
      return value < threshold;
    case ">=":
      return value >= threshold;
    case "<=":
      return value <= threshold;
    case "==":
      return value === threshold;
    case "!=":
      return !Number.isNaN(value) && value !== threshold;
  }
}

/** The value of an expression without selectors that evaluates to a scalar, else undefined. */
function constant(e: Expr): number | undefined {
  if (typeOf(e) !== "scalar" || selectorsOf(e).length > 0) return undefined;
  const v = evaluateInstant(e, { select: () => [] }, 0);
  return v.type === "scalar" ? v.value : undefined;
}

function selectorsOf(e: Expr): SelectorExpr[] {
  switch (e.type) {
    case "selector":
      return [e];
    case "range":
      return [e.selector];
    case "call":
      return e.args.flatMap(selectorsOf);
    case "subquery":
      return selectorsOf(e.expr);
    case "aggregate":
      return [...(e.param ? selectorsOf(e.param) : []), ...selectorsOf(e.expr)];
    case "binary":
      return [...selectorsOf(e.lhs), ...selectorsOf(e.rhs)];
    case "unary":
      return selectorsOf(e.expr);
    default:
      return [];
  }
}

function rangesOf(e: Expr): number[] {
  switch (e.type) {
    case "range":
      return [e.rangeMs];
    case "call":
      return e.args.flatMap(rangesOf);
    case "subquery":
      return [e.rangeMs, ...rangesOf(e.expr)];
    case "aggregate":
      return [...(e.param ? rangesOf(e.param) : []), ...rangesOf(e.expr)];
    case "binary":
      return [...rangesOf(e.lhs), ...rangesOf(e.rhs)];
    case "unary":
      return rangesOf(e.expr);
    default:
      return [];
  }
}

/** A selector, or avg/max/min_over_time of one: values in the metric's unit. */
function isPlain(e: Expr): boolean {
  if (e.type === "selector") return true;
  return e.type === "call" && e.fn !== "rate" && e.fn !== "increase";
}

function equalTo(s: SelectorExpr, name: string): string | undefined {
  return s.matchers.find((m) => m.name === name && m.op === "=")?.value;
}

/** The one value every selector pins `name` to with `=`, checked by `check`. */
function samePin<T>(selectors: readonly SelectorExpr[], name: string, check: (v: string) => T): { value: T } {
  let pinned: string | undefined;
  for (const s of selectors) {
    const v = equalTo(s, name);
    if (v === undefined)
      throw new Error(`every selector must name its ${name} with =, e.g. ${EXAMPLE}; ${s.text} does not`);
    if (pinned !== undefined && v !== pinned)
      throw new Error(`every selector must name the same ${name}: ${JSON.stringify(pinned)} and ${JSON.stringify(v)}`);
    pinned = v;
  }
  return { value: check(pinned as string) };
}

function knownPolicy(name: string, scope: RuleScope): string {
  if (scope.policies.includes(name)) return name;
  throw new Error(`unknown policy ${JSON.stringify(name)}: the config's policies are ${scope.policies.join(", ")}`);
}

function knownWindow(label: string, scope: RuleScope): number {
  const labels = scope.windowsMs.map(windowLabel);
  const at = labels.indexOf(label);
  if (at >= 0) return scope.windowsMs[at] as number;
  let ms: number | undefined;
  try {
    ms = parseDuration(label);
  } catch {
    ms = undefined;
  }
  const hint =
    ms !== undefined && scope.windowsMs.includes(ms)
      ? `write window="${windowLabel(ms)}" (the label is in seconds)`
      : `the config's windows are ${labels.join(", ")}`;
  throw new Error(`unknown window ${JSON.stringify(label)}: ${hint}`);
}
