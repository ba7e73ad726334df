/** The expressions of tidemark's PromQL (Prometheus 2.42's float language), built from lezer-promql's tree by parse.ts. */
import { FUNCTIONS } from "./function-types.js";
import type { Matcher } from "./matcher.js";

import type { ValueType } from "./value-type.js";

export type { ValueType };

export type ArithmeticOp = "+" | "-" | "*" | "/" | "%" | "^" | "atan2";
export type ComparisonOp = "==" | "!=" | ">" | "<" | ">=" | "<=";
export type SetOp = "and" | "or" | "unless";
export type BinaryOp = ArithmeticOp | ComparisonOp | SetOp;

export type AggregateOp =
  | "sum"
  | "avg"
  | "min"
  | "max"
  | "count"
  | "group"
  | "stddev"
  | "stdvar"
  | "topk"
  | "bottomk"
  | "quantile"
  | "count_values";

/** `@ 1700000000`, `@ start()`, `@ end()`: the time a selector or subquery is evaluated at, whatever the step. */
export type AtModifier = { readonly ms: number } | "start" | "end";

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
  readonly at: AtModifier | undefined;
  /** The selector's text, for messages. */
  readonly text: string;
}

export interface RangeExpr {
  readonly type: "range";
  readonly selector: SelectorExpr;
  readonly rangeMs: number;
  readonly text: string;
}

export interface SubqueryExpr {
  readonly type: "subquery";
  readonly expr: Expr;
  readonly rangeMs: number;
  /** 0: the default step (EvalOptions.subqueryStepMs). */
  readonly stepMs: number;
  readonly offsetMs: number;
  readonly at: AtModifier | undefined;
  readonly text: string;
}

export interface CallExpr {
  readonly type: "call";
  readonly fn: string;
  readonly args: readonly Expr[];
}

export interface AggregateExpr {
  readonly type: "aggregate";
  readonly op: AggregateOp;
  /** topk/bottomk's k, quantile's φ, count_values' label. */
  readonly param: Expr | undefined;
  readonly expr: Expr;
  readonly grouping: readonly string[];
  readonly without: boolean;
}

export type Cardinality = "one-to-one" | "many-to-one" | "one-to-many" | "many-to-many";

export interface VectorMatching {
  readonly card: Cardinality;
  /** `on(...)` when true, else `ignoring(...)` (the default is `ignoring()`: every label). */
  readonly on: boolean;
  readonly labels: readonly string[];
  /** group_left/group_right's labels, copied from the "one" side. */
  readonly include: readonly string[];
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
  NumberExpr | StringExpr | SelectorExpr | RangeExpr | SubqueryExpr | CallExpr | AggregateExpr | BinaryExpr | UnaryExpr;

export const COMPARISON_OPS: readonly string[] = ["==", "!=", ">", "<", ">=", "<="];
export const SET_OPS: readonly string[] = ["and", "or", "unless"];

export function isComparison(op: BinaryOp): op is ComparisonOp {
  return COMPARISON_OPS.includes(op);
}

export function isSetOp(op: BinaryOp): op is SetOp {
  return SET_OPS.includes(op);
}

/** The type an expression evaluates to. */
export function typeOf(e: Expr): ValueType {
  switch (e.type) {
    case "number":
      return "scalar";
    case "string":
      return "string";
    case "range":
    case "subquery":
      return "matrix";
    case "unary":
      return typeOf(e.expr);
    case "binary":
      return typeOf(e.lhs) === "scalar" && typeOf(e.rhs) === "scalar" ? "scalar" : "vector";
    case "call":
      return FUNCTIONS[e.fn]?.returns ?? "vector";
    default:
      return "vector";
  }
}

export function typeName(t: ValueType): string {
  return t === "vector" ? "instant vector" : t === "matrix" ? "range vector" : t;
}
