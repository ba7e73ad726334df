/**
 * Binary operators with Prometheus 2.42's semantics: arithmetic (dropping `__name__`), comparisons
 * (filtering, or 0/1 with `bool`), scalar–scalar and vector–scalar; vector–vector matching is in
 * vector-matching.ts (docs/prometheus-api.md, "PromQL").
 */
import { DashboardError } from "../errors.js";
import { isComparison, type BinaryExpr } from "./ast.js";
import { apply, dropsName } from "./binary-op.js";
import { dropName } from "./labels.js";
import type { Sample, Value } from "./values.js";
import { setOperation, vectorBinop } from "./vector-matching.js";

export function binary(e: BinaryExpr, lhs: Value, rhs: Value): Value {
  if (lhs.type === "scalar" && rhs.type === "scalar") {
    const [v, keep] = apply(e.op, lhs.value, rhs.value);
    return { type: "scalar", value: isComparison(e.op) ? Number(keep) : v };
  }
  if (lhs.type === "vector" && rhs.type === "scalar")
    return { type: "vector", samples: withScalar(e, lhs.samples, rhs.value, false) };
  if (lhs.type === "scalar" && rhs.type === "vector")
    return { type: "vector", samples: withScalar(e, rhs.samples, lhs.value, true) };
  if (lhs.type === "vector" && rhs.type === "vector") {
    const samples =
      e.matching.card === "many-to-many"
        ? setOperation(e, lhs.samples, rhs.samples)
        : vectorBinop(e, lhs.samples, rhs.samples);
    return { type: "vector", samples };
  }
  throw new DashboardError(
    "TM_PROMQL_EXECUTION",
    "binary expression must contain only scalar and instant vector types",
  );
}

/** `vector op scalar` (or `scalar op vector` when swapped): a comparison keeps the vector's value. */
function withScalar(e: BinaryExpr, samples: readonly Sample[], scalar: number, swapped: boolean): Sample[] {
  const out: Sample[] = [];
  const comparison = isComparison(e.op);
  const drop = dropsName(e.op) || e.bool;
  for (const s of samples) {
    const [l, r] = swapped ? [scalar, s.value] : [s.value, scalar];
    let [v, keep] = apply(e.op, l, r);
    if (comparison && swapped) v = s.value;
    if (e.bool) [v, keep] = [Number(keep), true];
    if (keep) out.push({ labels: drop ? dropName(s.labels) : s.labels, value: v });
  }
  return out;
}
