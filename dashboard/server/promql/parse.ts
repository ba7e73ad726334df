/**
 * PromQL text → expressions (ast.ts), read from lezer-promql's tree, checked as Prometheus 2.42's
 * parser checks them. Type errors are 400s worded like Prometheus's; valid PromQL that tidemark does
 * not evaluate is a 422 naming the construct (docs/prometheus-api.md, "PromQL").
 */
import {
  COMPARISON_OPS,
  SET_OPS,
  typeName,
  typeOf,
  type AtModifier,
  type BinaryOp,
  type Cardinality,
  type Expr,
  type VectorMatching,
} from "./ast.js";
import { numberLiteral, stringLiteral } from "./literals.js";
import { aggregateOf, callOf } from "./parse-call.js";
import { durationOf, groupingOf, offsetOf, selectorOf } from "./parse-selector.js";
import { kids, parseError, syntaxTree, textOf, unsupported, type SyntaxNode } from "./syntax.js";
import { checkNesting } from "./nesting.js";

const OPS: Record<string, BinaryOp> = {
  Pow: "^",
  Mul: "*",
  Div: "/",
  Mod: "%",
  Atan2: "atan2",
  Add: "+",
  Sub: "-",
  Eql: "==",
  Neq: "!=",
  Gtr: ">",
  Lss: "<",
  Gte: ">=",
  Lte: "<=",
  And: "and",
  Or: "or",
  Unless: "unless",
};
const CONSTRUCTS: Record<string, string> = {
  AnchoredExpr: "the anchored modifier is not in Prometheus 2.42",
  SmoothedExpr: "the smoothed modifier is not in Prometheus 2.42",
};
const ONE_TO_ONE: VectorMatching = { card: "one-to-one", on: false, labels: [], include: [] };

/** Parses a PromQL expression. */
export function parsePromql(query: string): Expr {
  if (query.trim() === "") throw parseError(query, 0, "no expression found in input");
  checkNesting(query);
  const top = kids(syntaxTree(query));
  const first = top[0];
  if (!first) throw parseError(query, 0, "no expression found in input");
  return new Builder(query).expr(first);
}

/** The offset and `@` read off a selector or subquery, outermost first. */
interface Modifiers {
  offsetMs: number | undefined;
  at: AtModifier | undefined;
}

export class Builder {
  constructor(readonly q: string) {}

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
      case "StepInvariantExpr":
      case "SubqueryExpr":
        return this.modified(n, { offsetMs: undefined, at: undefined });
      case "UnaryExpr":
        return this.unary(n);
      case "BinaryExpr":
        return this.binary(n);
      case "FunctionCall":
        return callOf(this, n);
      case "AggregateExpr":
        return aggregateOf(this, n);
      default:
        throw unsupported(CONSTRUCTS[n.name] ?? `${JSON.stringify(this.text(n))} (${n.name}) is not supported`);
    }
  }

  /** A selector, range or subquery under its offset and `@` modifiers. */
  private modified(n: SyntaxNode, mods: Modifiers): Expr {
    const [inner, , arg] = kids(n);
    if (n.name === "OffsetExpr" || n.name === "StepInvariantExpr") {
      if (!inner || !arg) throw this.error(n, "a modifier needs a value");
      const what = n.name === "OffsetExpr" ? "offset" : "@";
      if (!["VectorSelector", "MatrixSelector", "SubqueryExpr", "OffsetExpr", "StepInvariantExpr"].includes(inner.name))
        throw this.error(
          n,
          `${what} modifier must be preceded by an instant vector selector or range vector selector or a subquery`,
        );
      if (n.name === "OffsetExpr") {
        if (mods.offsetMs !== undefined || inner.name === "OffsetExpr")
          throw this.error(n, "offset may not be set multiple times");
        return this.modified(inner, { ...mods, offsetMs: offsetOf(this.q, arg) });
      }
      if (mods.at !== undefined || inner.name === "StepInvariantExpr")
        throw this.error(n, "@ <timestamp> may not be set multiple times");
      return this.modified(inner, { ...mods, at: this.at(arg) });
    }
    const offsetMs = mods.offsetMs ?? 0;
    if (n.name === "VectorSelector") return { ...selectorOf(this.q, n, offsetMs), at: mods.at };
    if (n.name === "MatrixSelector") {
      const range = kids(n).at(-1);
      if (!inner || !range) throw this.error(n, "ranges only allowed for vector selectors");
      if (inner.name === "OffsetExpr") throw this.error(inner, "no offset modifiers allowed before range");
      if (inner.name === "StepInvariantExpr") throw this.error(inner, "no @ modifiers allowed before range");
      if (inner.name !== "VectorSelector") throw this.error(n, "ranges only allowed for vector selectors");
      const rangeMs = durationOf(this.q, range);
      if (rangeMs <= 0) throw this.error(range, "range must be greater than 0");
      const selector = { ...selectorOf(this.q, inner, offsetMs), at: mods.at };
      return { type: "range", selector, rangeMs, text: this.text(n) };
    }
    return this.subquery(n, offsetMs, mods.at);
  }

  private subquery(n: SyntaxNode, offsetMs: number, at: AtModifier | undefined): Expr {
    const [inner, rangeNode, stepNode] = kids(n);
    if (!inner || !rangeNode) throw this.error(n, "a subquery needs a range, e.g. x[5m:1m]");
    const expr = this.expr(inner);
    if (typeOf(expr) !== "vector")
      throw this.error(inner, `subquery is only allowed on instant vector, got ${typeName(typeOf(expr))}`);
    const rangeMs = durationOf(this.q, rangeNode);
    if (rangeMs <= 0) throw this.error(rangeNode, "range must be greater than 0");
    const stepMs = stepNode ? durationOf(this.q, stepNode) : 0;
    if (stepNode && stepMs <= 0) throw this.error(stepNode, "step must be greater than 0");
    return { type: "subquery", expr, rangeMs, stepMs, offsetMs, at, text: this.text(n) };
  }

  /** `@ 1700000000` (seconds, to ms as Prometheus rounds them), `@ start()`, `@ end()`. */
  private at(n: SyntaxNode): AtModifier {
    if (n.name === "AtModifierPreprocessors") return kids(n)[0]?.name === "AtStart" ? "start" : "end";
    const v = numberLiteral(this.text(n));
    if (v === undefined || !Number.isFinite(v))
      throw this.error(n, `timestamp out of bounds for @ modifier: ${this.text(n)}`);
    return { ms: Math.round(v * 1000) };
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
    let lhs = this.expr(lhsNode);
    const rhs = this.expr(rhsNode);
    const lt = typeOf(lhs);
    const rt = typeOf(rhs);
    if ((lt !== "scalar" && lt !== "vector") || (rt !== "scalar" && rt !== "vector"))
      throw this.error(n, "binary expression must contain only scalar and instant vector types");
    const comparison = COMPARISON_OPS.includes(op);
    const setOp = SET_OPS.includes(op);
    if (bool && !comparison) throw this.error(n, "bool modifier can only be used on comparison operators");
    if (comparison && !bool && lt === "scalar" && rt === "scalar")
      throw this.error(n, "comparisons between scalars must use BOOL modifier");
    if (setOp && (lt === "scalar" || rt === "scalar"))
      throw this.error(n, `set operator "${op}" not allowed in binary scalar expression`);
    if (clause && (lt === "scalar" || rt === "scalar"))
      throw this.error(clause, "vector matching only allowed between instant vectors");
    const matching = clause
      ? this.matching(clause, op)
      : setOp
        ? { ...ONE_TO_ONE, card: "many-to-many" as const }
        : ONE_TO_ONE;
    // lezer-promql reads "-2" as one literal, so "-2 ^ 2" would be (-2)^2; Prometheus binds ^ tighter: -(2^2).
    if (op === "^" && lhs.type === "number" && this.text(lhsNode).startsWith("-")) {
      lhs = { type: "number", value: -lhs.value };
      const power: Expr = { type: "binary", op, lhs, rhs, bool: false, matching };
      return { type: "unary", op: "-", expr: power };
    }
    return { type: "binary", op, lhs, rhs, bool, matching };
  }

  private matching(clause: SyntaxNode, op: BinaryOp): VectorMatching {
    const [kind, labelsNode, group, includeNode] = kids(clause);
    const on = kind?.name === "On";
    const labels = labelsNode ? groupingOf(this.q, labelsNode) : [];
    let card: Cardinality = SET_OPS.includes(op) ? "many-to-many" : "one-to-one";
    const include = includeNode ? groupingOf(this.q, includeNode) : [];
    if (group) {
      if (card === "many-to-many") throw this.error(group, `no grouping allowed for "${op}" operation`);
      card = group.name === "GroupLeft" ? "many-to-one" : "one-to-many";
      for (const l of include)
        if (on && labels.includes(l))
          throw this.error(group, `label "${l}" must not occur in ON and GROUP clause at once`);
    }
    return { card, on, labels, include };
  }

  string(n: SyntaxNode): string {
    const v = stringLiteral(this.text(n));
    if (v === undefined) throw this.error(n, `bad string literal ${this.text(n)}`);
    return v;
  }

  private only(n: SyntaxNode): SyntaxNode {
    const inner = kids(n)[0];
    if (!inner) throw this.error(n, "empty parentheses");
    return inner;
  }

  text(n: SyntaxNode): string {
    return textOf(this.q, n);
  }

  error(n: SyntaxNode, what: string) {
    return parseError(this.q, n.from, what);
  }
}
