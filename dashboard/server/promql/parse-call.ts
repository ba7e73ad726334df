/** Function calls and aggregations from lezer-promql's tree, typed as Prometheus 2.42 types them (see parse.ts). */
import { typeName, typeOf, type AggregateOp, type Expr, type ValueType } from "./ast.js";
import { FUNCTIONS, REFUSED } from "./function-types.js";
import { groupingOf } from "./parse-selector.js";
import { kids, unsupported, type SyntaxNode } from "./syntax.js";

/** What building a call or an aggregation needs of parse.ts's Builder: the query, node text, sub-expressions, errors. */
export interface Builder {
  readonly q: string;
  text(n: SyntaxNode): string;
  expr(n: SyntaxNode): Expr;
  error(n: SyntaxNode, what: string): Error;
}

const AGGREGATIONS: readonly AggregateOp[] = [
  "sum",
  "avg",
  "min",
  "max",
  "count",
  "group",
  "stddev",
  "stdvar",
  "topk",
  "bottomk",
  "quantile",
  "count_values",
];
/** Functions lezer-promql knows that Prometheus 2.42 did not have yet. */
const LATER = "is not in Prometheus 2.42, whose PromQL tidemark answers";
/** rate, increase and irate add up tidemark's per-window counts: they need the counts themselves. */
const COUNT_FUNCTIONS = ["rate", "increase", "irate"];

export function callOf(b: Builder, n: SyntaxNode): Expr {
  const [ident, body] = kids(n);
  const name = ident ? b.text(ident) : "";
  const refused = REFUSED[name];
  if (refused) throw unsupported(refused);
  const type = FUNCTIONS[name];
  if (!type) throw unsupported(`function ${name} ${LATER}`);
  const argNodes = body ? kids(body) : [];
  checkArity(b, n, name, type.args.length, type.optional, argNodes.length);
  const args = argNodes.map((a) => b.expr(a));
  args.forEach((arg, i) => {
    const want = type.args[Math.min(i, type.args.length - 1)] as ValueType;
    const got = typeOf(arg);
    if (got !== want)
      throw b.error(
        argNodes[i] as SyntaxNode,
        `expected type ${typeName(want)} in call to function ${JSON.stringify(name)}, got ${typeName(got)}`,
      );
  });
  if (COUNT_FUNCTIONS.includes(name) && args[0]?.type === "subquery")
    throw unsupported(
      `${name}() over a subquery: tidemark's ${name} adds up per-window counts of a count metric (docs/prometheus-api.md, "rate, increase and irate"); use sum_over_time over the subquery instead`,
    );
  return { type: "call", fn: name, args };
}

function checkArity(b: Builder, n: SyntaxNode, name: string, max: number, optional: number, got: number): void {
  const fn = JSON.stringify(name);
  if (optional < 0) {
    if (got < max) throw b.error(n, `expected at least ${max} argument(s) in call to ${fn}, got ${got}`);
    return;
  }
  const min = max - optional;
  if (got > max) throw b.error(n, `expected at most ${max} argument(s) in call to ${fn}, got ${got}`);
  if (got < min)
    throw b.error(
      n,
      optional > 0
        ? `expected at least ${min} argument(s) in call to ${fn}, got ${got}`
        : `expected ${max} argument(s) in call to ${fn}, got ${got}`,
    );
}

export function aggregateOf(b: Builder, n: SyntaxNode): Expr {
  const parts = kids(n);
  const op = b.text(parts[0] as SyntaxNode);
  if (!AGGREGATIONS.includes(op as AggregateOp)) throw unsupported(`aggregation ${op} ${LATER}`);
  const modifier = parts.find((p) => p.name === "AggregateModifier");
  const body = parts.find((p) => p.name === "FunctionCallBody");
  const args = body ? kids(body) : [];
  const paramType: ValueType | undefined =
    op === "count_values" ? "string" : ["topk", "bottomk", "quantile"].includes(op) ? "scalar" : undefined;
  const want = paramType ? 2 : 1;
  if (args.length !== want)
    throw b.error(
      n,
      `wrong number of arguments for aggregate expression provided, expected ${want}, got ${args.length}`,
    );
  const param = paramType ? b.expr(args[0] as SyntaxNode) : undefined;
  if (param && paramType && typeOf(param) !== paramType)
    throw b.error(
      args[0] as SyntaxNode,
      `expected type ${typeName(paramType)} in aggregation parameter, got ${typeName(typeOf(param))}`,
    );
  const inner = args[args.length - 1] as SyntaxNode;
  const expr = b.expr(inner);
  if (typeOf(expr) !== "vector")
    throw b.error(inner, `expected type instant vector in aggregation expression, got ${typeName(typeOf(expr))}`);
  const [kind, labels] = modifier ? kids(modifier) : [];
  return {
    type: "aggregate",
    op: op as AggregateOp,
    param,
    expr,
    grouping: labels ? groupingOf(b.q, labels) : [],
    without: kind?.name === "Without",
  };
}
