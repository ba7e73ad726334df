/**
 * Binary operators with Prometheus semantics: arithmetic, comparisons (filtering, or 0/1 with
 * `bool`), scalar–vector and one-to-one vector matching on all labels, `on(...)` or `ignoring(...)`.
 */
import { DashboardError } from "../errors.js";
import { isComparison, type BinaryExpr, type BinaryOp } from "./ast.js";
import { dropName, formatLabels, METRIC_NAME, pick, signatureOf, type Labels } from "./labels.js";
import type { Sample, Value } from "./values.js";

/** Go's math.Pow where JavaScript's `**` differs (1^NaN, (−1)^±Inf). */
function pow(x: number, y: number): number {
  if (x === 1 || (x === -1 && !Number.isFinite(y) && !Number.isNaN(y))) return 1;
  return x ** y;
}

/** The result of `l op r` and, for comparisons, whether it holds (arithmetic always keeps). */
function apply(op: BinaryOp, l: number, r: number): [number, boolean] {
  switch (op) {
    case "+":
      return [l + r, true];
    case "-":
      return [l - r, true];
    case "*":
      return [l * r, true];
    case "/":
      return [l / r, true];
    case "%":
      return [l % r, true];
    case "^":
      return [pow(l, r), true];
    case "==":
      return [l, l === r];
    case "!=":
      return [l, l !== r];
    case ">":
      return [l, l > r];
    case "<":
      return [l, l < r];
    case ">=":
      return [l, l >= r];
    case "<=":
      return [l, l <= r];
  }
}

export function binary(e: BinaryExpr, lhs: Value, rhs: Value): Value {
  if (lhs.type === "scalar" && rhs.type === "scalar") {
    const [v, keep] = apply(e.op, lhs.value, rhs.value);
    return { type: "scalar", value: e.bool ? Number(keep) : v };
  }
  if (lhs.type === "vector" && rhs.type === "scalar")
    return { type: "vector", samples: withScalar(e, lhs.samples, rhs.value, false) };
  if (lhs.type === "scalar" && rhs.type === "vector")
    return { type: "vector", samples: withScalar(e, rhs.samples, lhs.value, true) };
  if (lhs.type === "vector" && rhs.type === "vector")
    return { type: "vector", samples: vectors(e, lhs.samples, rhs.samples) };
  throw new DashboardError(
    "TM_PROMQL_EXECUTION",
    "binary expression must contain only scalar and instant vector types",
  );
}

/** `vector op scalar` (or `scalar op vector` when swapped): a comparison keeps the vector's value. */
function withScalar(e: BinaryExpr, samples: readonly Sample[], scalar: number, swapped: boolean): Sample[] {
  const out: Sample[] = [];
  const comparison = isComparison(e.op);
  for (const s of samples) {
    const [l, r] = swapped ? [scalar, s.value] : [s.value, scalar];
    let [v, keep] = apply(e.op, l, r);
    if (comparison && swapped) v = s.value;
    if (e.bool) [v, keep] = [Number(keep), true];
    if (keep) out.push({ labels: !comparison || e.bool ? dropName(s.labels) : s.labels, value: v });
  }
  return out;
}

function vectors(e: BinaryExpr, lhs: readonly Sample[], rhs: readonly Sample[]): Sample[] {
  const { on, labels } = e.matching;
  const matched = on ? (n: string) => labels.includes(n) : (n: string) => n !== METRIC_NAME && !labels.includes(n);
  const right = new Map<string, Sample>();
  for (const s of rhs) {
    const sig = signatureOf(s.labels, matched);
    const dup = right.get(sig);
    if (dup)
      throw new DashboardError(
        "TM_PROMQL_EXECUTION",
        `found duplicate series for the match group ${formatLabels(pick(s.labels, matched))} on the right hand-side of the operation: [${formatLabels(dup.labels)}, ${formatLabels(s.labels)}]; many-to-many matching not allowed: matching labels must be unique on one side`,
      );
    right.set(sig, s);
  }
  const comparison = isComparison(e.op);
  const seen = new Set<string>();
  const out: Sample[] = [];
  for (const l of lhs) {
    const sig = signatureOf(l.labels, matched);
    const r = right.get(sig);
    if (!r) continue;
    let [v, keep] = apply(e.op, l.value, r.value);
    if (e.bool) [v, keep] = [Number(keep), true];
    if (!keep) continue;
    if (seen.has(sig))
      throw new DashboardError(
        "TM_PROMQL_EXECUTION",
        `multiple matches for labels ${formatLabels(pick(l.labels, matched))}: many-to-one matching must be explicit (group_left/group_right), which tidemark does not support`,
      );
    seen.add(sig);
    out.push({ labels: resultLabels(l.labels, !comparison || e.bool, on, labels), value: v });
  }
  return out;
}

/** Prometheus's one-to-one result labels: the left side's, less `__name__` for arithmetic, kept to `on` or less `ignoring`. */
function resultLabels(l: Labels, dropMetricName: boolean, on: boolean, labels: readonly string[]): Labels {
  return pick(l, (n) => !(dropMetricName && n === METRIC_NAME) && (on ? labels.includes(n) : !labels.includes(n)));
}
