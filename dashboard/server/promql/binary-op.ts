/**
 * A binary operator on two numbers, with Prometheus 2.42's semantics (docs/prometheus-api.md,
 * "PromQL"): shared by binary.ts (scalars, vector–scalar) and vector-matching.ts.
 */
import { DashboardError } from "../errors.js";
import type { BinaryOp } from "./ast.js";

/** Go's math.Pow where JavaScript's `**` differs (1^NaN, (−1)^±Inf). */
function pow(x: number, y: number): number {
  if (x === 1 || (x === -1 && !Number.isFinite(y) && !Number.isNaN(y))) return 1;
  return x ** y;
}

/** The result of `l op r` and, for comparisons, whether it holds (arithmetic always keeps). */
export function apply(op: BinaryOp, l: number, r: number): [number, boolean] {
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
    case "atan2":
      return [Math.atan2(l, r), true];
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
    default:
      throw new DashboardError("TM_PROMQL_EXECUTION", `operator ${op} not allowed between numbers`);
  }
}

/** Arithmetic drops `__name__` (atan2 does not, as in Prometheus 2.42). */
export function dropsName(op: BinaryOp): boolean {
  return op === "+" || op === "-" || op === "*" || op === "/" || op === "%" || op === "^";
}
