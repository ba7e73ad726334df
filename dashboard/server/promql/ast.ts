/** The expressions of tidemark's PromQL subset, built from lezer-promql's tree by parse.ts. */
import type { Matcher } from "./matcher.js";

export type ValueType = "scalar" | "vector" | "matrix" | "string";

export type ArithmeticOp = "+" | "-" | "*" | "/" | "%" | "^";
export type ComparisonOp = "==" | "!=" | ">" | "<" | ">=" | "<=";
export type BinaryOp = ArithmeticOp | ComparisonOp;

export type RangeFunction = "rate" | "increase" | "avg_over_time" | "max_over_time" | "min_over_time";
export type AggregateOp = "sum" | "avg" | "min" | "max" | "count" | "topk";

export interface NumberExpr {
  readonly type: "number";
  readonly value: number;
}

export interface StringExpr {
  readonly type: "string";
  readonly value: string;
}

export interface SelectorExpr {
  readonly type: "selector";
  /** Every matcher, the metric name as `__name__ = name` included. */
  readonly matchers: readonly Matcher[];
  readonly offsetMs: number;
  /** The selector's text, for messages. */
  readonly text: string;
}

export interface RangeExpr {
  readonly type: "range";
  readonly selector: SelectorExpr;
  readonly rangeMs: number;
  readonly text: string;
}

export interface CallExpr {
  readonly type: "call";
  readonly fn: RangeFunction;
  readonly arg: RangeExpr;
}

export interface AggregateExpr {
  readonly type: "aggregate";
  readonly op: AggregateOp;
  /** topk's k. */
  readonly param: Expr | undefined;
  readonly expr: Expr;
  readonly grouping: readonly string[];
  readonly without: boolean;
}

export interface VectorMatching {
  /** `on(...)` when true, else `ignoring(...)` (the default is `ignoring()`: every label). */
  readonly on: boolean;
  readonly labels: readonly string[];
}

export interface BinaryExpr {
  readonly type: "binary";
  readonly op: BinaryOp;
  readonly lhs: Expr;
  readonly rhs: Expr;
  readonly bool: boolean;
  readonly matching: VectorMatching;
}

export interface UnaryExpr {
  readonly type: "unary";
  readonly op: "-" | "+";
  readonly expr: Expr;
}

export type Expr =
  NumberExpr | StringExpr | SelectorExpr | RangeExpr | CallExpr | AggregateExpr | BinaryExpr | UnaryExpr;

export const COMPARISON_OPS: readonly string[] = ["==", "!=", ">", "<", ">=", "<="];

export function isComparison(op: BinaryOp): op is ComparisonOp {
  return COMPARISON_OPS.includes(op);
}

/** The type an expression evaluates to. */
export function typeOf(e: Expr): ValueType {
  switch (e.type) {
    case "number":
      return "scalar";
    case "string":
      return "string";
    case "range":
      return "matrix";
    case "unary":
      return typeOf(e.expr);
    case "binary":
      return typeOf(e.lhs) === "scalar" && typeOf(e.rhs) === "scalar" ? "scalar" : "vector";
    default:
      return "vector";
  }
}

export function typeName(t: ValueType): string {
  return t === "vector" ? "instant vector" : t === "matrix" ? "range vector" : t;
}
