/**
 * PromQL text → the subset's expressions (ast.ts), read from lezer-promql's tree. Type errors are
 * 400s worded like Prometheus's; valid PromQL outside the subset is a 422 naming the construct
 * (docs/prometheus-api.md, "The PromQL subset").
 */
import {
  COMPARISON_OPS,
  typeName,
  typeOf,
  type AggregateOp,
  type BinaryOp,
  type Expr,
  type RangeFunction,
  type VectorMatching,
} from "./ast.js";
import { numberLiteral, stringLiteral } from "./literals.js";
import { durationOf, groupingOf, offsetOf, selectorOf } from "./parse-selector.js";
import { kids, parseError, syntaxTree, textOf, unsupported, type SyntaxNode } from "./syntax.js";

const FUNCTIONS: readonly RangeFunction[] = ["rate", "increase", "avg_over_time", "max_over_time", "min_over_time"];
const AGGREGATIONS: readonly AggregateOp[] = ["sum", "avg", "min", "max", "count", "topk"];
const OPS: Record<string, BinaryOp> = {
  Pow: "^",
  Mul: "*",
  Div: "/",
  Mod: "%",
  Add: "+",
  Sub: "-",
  Eql: "==",
  Neq: "!=",
  Gtr: ">",
  Lss: "<",
  Gte: ">=",
  Lte: "<=",
};
const CONSTRUCTS: Record<string, string> = {
  SubqueryExpr: "subqueries are not supported",
  StepInvariantExpr: "the @ modifier is not supported",
  AnchoredExpr: "the anchored modifier is not supported",
  SmoothedExpr: "the smoothed modifier is not supported",
};

/** Parses a PromQL expression of the subset. */
export function parsePromql(query: string): Expr {
  if (query.trim() === "") throw parseError(query, 0, "no expression found in input");
  const top = kids(syntaxTree(query));
  const first = top[0];
  if (!first) throw parseError(query, 0, "no expression found in input");
  return new Builder(query).expr(first);
}

class Builder {
  constructor(private readonly q: string) {}

  expr(n: SyntaxNode): Expr {
    switch (n.name) {
      case "ParenExpr":
        return this.expr(this.only(n));
      case "NumberDurationLiteral": {
        const value = numberLiteral(this.text(n));
        if (value === undefined) throw this.error(n, `bad number or duration syntax: ${JSON.stringify(this.text(n))}`);
        return { type: "number", value };
      }
      case "StringLiteral":
        return { type: "string", value: this.string(n) };
      case "VectorSelector":
      case "MatrixSelector":
      case "OffsetExpr":
        return this.selector(n);
      case "UnaryExpr":
        return this.unary(n);
      case "BinaryExpr":
        return this.binary(n);
      case "FunctionCall":
        return this.call(n);
      case "AggregateExpr":
        return this.aggregate(n);
      default:
        throw unsupported(CONSTRUCTS[n.name] ?? `${JSON.stringify(this.text(n))} (${n.name}) is not supported`);
    }
  }

  private selector(n: SyntaxNode): Expr {
    if (n.name === "VectorSelector") return selectorOf(this.q, n, 0);
    const [inner, , durationNode] = kids(n);
    if (n.name === "OffsetExpr") {
      if (!inner || !durationNode) throw this.error(n, "offset needs a duration, e.g. offset 5m");
      const offsetMs = offsetOf(this.q, durationNode);
      if (inner.name === "VectorSelector") return selectorOf(this.q, inner, offsetMs);
      if (inner.name === "MatrixSelector") {
        const r = this.selector(inner);
        if (r.type !== "range") throw this.error(inner, "ranges only allowed for vector selectors");
        return { ...r, selector: { ...r.selector, offsetMs } };
      }
      if (inner.name === "OffsetExpr") throw this.error(n, "offset may not be set multiple times");
      if (inner.name === "SubqueryExpr") throw unsupported("subqueries are not supported");
      throw this.error(n, "offset modifier must be preceded by an instant vector selector or range vector selector");
    }
    const range = kids(n).at(-1);
    if (!inner || !range) throw this.error(n, "ranges only allowed for vector selectors");
    if (inner.name === "OffsetExpr") throw this.error(inner, "no offset modifiers allowed before range");
    if (inner.name !== "VectorSelector") throw this.error(n, "ranges only allowed for vector selectors");
    const rangeMs = durationOf(this.q, range);
    if (rangeMs <= 0) throw this.error(range, "range must be greater than 0");
    return { type: "range", selector: selectorOf(this.q, inner, 0), rangeMs, text: this.text(n) };
  }

  private unary(n: SyntaxNode): Expr {
    const [opNode, operand] = kids(n);
    if (!opNode || !operand) throw this.error(n, "unary operator needs an operand");
    const expr = this.expr(operand);
    const t = typeOf(expr);
    if (t !== "scalar" && t !== "vector")
      throw this.error(
        operand,
        `unary expression only allowed on expressions of type scalar or instant vector, got ${typeName(t)}`,
      );
    return { type: "unary", op: this.text(opNode) === "-" ? "-" : "+", expr };
  }

  private binary(n: SyntaxNode): Expr {
    const parts = kids(n);
    const lhsNode = parts[0] as SyntaxNode;
    const opNode = parts[1] as SyntaxNode;
    const rhsNode = parts[parts.length - 1] as SyntaxNode;
    const op = OPS[opNode.name];
    if (!op) throw unsupported(`operator ${this.text(opNode)} is not supported`);
    const modifiers = parts.slice(2, -1);
    const bool = modifiers.some((m) => m.name === "BoolModifier");
    const clause = modifiers.find((m) => m.name === "MatchingModifierClause");
    const other = modifiers.find((m) => m.name !== "BoolModifier" && m.name !== "MatchingModifierClause");
    if (other) throw unsupported(`the ${JSON.stringify(this.text(other))} modifier is not supported`);
    let lhs = this.expr(lhsNode);
    const rhs = this.expr(rhsNode);
    const lt = typeOf(lhs);
    const rt = typeOf(rhs);
    if ((lt !== "scalar" && lt !== "vector") || (rt !== "scalar" && rt !== "vector"))
      throw this.error(n, "binary expression must contain only scalar and instant vector types");
    const comparison = COMPARISON_OPS.includes(op);
    if (bool && !comparison) throw this.error(n, "bool modifier can only be used on comparison operators");
    if (comparison && !bool && lt === "scalar" && rt === "scalar")
      throw this.error(n, "comparisons between scalars must use BOOL modifier");
    if (clause && (lt === "scalar" || rt === "scalar"))
      throw this.error(clause, "vector matching only allowed between instant vectors");
    // lezer-promql reads "-2" as one literal, so "-2 ^ 2" would be (-2)^2; Prometheus binds ^ tighter: -(2^2).
    if (op === "^" && lhs.type === "number" && this.text(lhsNode).startsWith("-")) {
      lhs = { type: "number", value: -lhs.value };
      const power: Expr = { type: "binary", op, lhs, rhs, bool: false, matching: { on: false, labels: [] } };
      return { type: "unary", op: "-", expr: power };
    }
    return { type: "binary", op, lhs, rhs, bool, matching: clause ? this.matching(clause) : { on: false, labels: [] } };
  }

  private matching(clause: SyntaxNode): VectorMatching {
    const [kind, labels, group] = kids(clause);
    if (group) throw unsupported(`${this.text(group)} is not supported: only one-to-one vector matching`);
    return { on: kind?.name === "On", labels: labels ? groupingOf(this.q, labels) : [] };
  }

  private call(n: SyntaxNode): Expr {
    const [ident, body] = kids(n);
    const name = ident ? this.text(ident) : "";
    if (!FUNCTIONS.includes(name as RangeFunction)) throw unsupported(`function ${name} is not supported`);
    const args = body ? kids(body) : [];
    if (args.length !== 1)
      throw this.error(n, `expected 1 argument in call to function ${JSON.stringify(name)}, got ${args.length}`);
    const arg = this.expr(args[0] as SyntaxNode);
    if (arg.type !== "range")
      throw this.error(
        args[0] as SyntaxNode,
        `expected type range vector in call to function ${JSON.stringify(name)}, got ${typeName(typeOf(arg))}`,
      );
    return { type: "call", fn: name as RangeFunction, arg };
  }

  private aggregate(n: SyntaxNode): Expr {
    const parts = kids(n);
    const op = this.text(parts[0] as SyntaxNode);
    if (!AGGREGATIONS.includes(op as AggregateOp)) throw unsupported(`aggregation ${op} is not supported`);
    const modifier = parts.find((p) => p.name === "AggregateModifier");
    const body = parts.find((p) => p.name === "FunctionCallBody");
    const args = body ? kids(body) : [];
    const want = op === "topk" ? 2 : 1;
    if (args.length !== want)
      throw this.error(
        n,
        `wrong number of arguments for aggregate expression provided, expected ${want}, got ${args.length}`,
      );
    const param = op === "topk" ? this.expr(args[0] as SyntaxNode) : undefined;
    if (param && typeOf(param) !== "scalar")
      throw this.error(
        args[0] as SyntaxNode,
        `expected type scalar in aggregation parameter, got ${typeName(typeOf(param))}`,
      );
    const inner = args[args.length - 1] as SyntaxNode;
    const expr = this.expr(inner);
    if (typeOf(expr) !== "vector")
      throw this.error(inner, `expected type instant vector in aggregation expression, got ${typeName(typeOf(expr))}`);
    const [kind, labels] = modifier ? kids(modifier) : [];
    return {
      type: "aggregate",
      op: op as AggregateOp,
      param,
      expr,
      grouping: labels ? groupingOf(this.q, labels) : [],
      without: kind?.name === "Without",
    };
  }

  private string(n: SyntaxNode): string {
    const v = stringLiteral(this.text(n));
    if (v === undefined) throw this.error(n, `bad string literal ${this.text(n)}`);
    return v;
  }

  private only(n: SyntaxNode): SyntaxNode {
    const inner = kids(n)[0];
    if (!inner) throw this.error(n, "empty parentheses");
    return inner;
  }

  private text(n: SyntaxNode): string {
    return textOf(this.q, n);
  }

  private error(n: SyntaxNode, what: string) {
    return parseError(this.q, n.from, what);
  }
}
