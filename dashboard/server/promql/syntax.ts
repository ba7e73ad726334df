/**
 * The lezer-promql tree, read without a hand-written parser: node access, error-recovery nodes
 * (lezer's "⚠") turned into a 400 naming the position, and the two error kinds
 * (docs/prometheus-api.md, "Errors").
 */
import { parser } from "@prometheus-io/lezer-promql";
import { DashboardError } from "../errors.js";

export type SyntaxNode = ReturnType<typeof parser.parse>["topNode"];

/**
 * Prometheus 2.42's function names that lezer-promql no longer knows, each masked by a known name
 * of the same length so the tree keeps the query's positions; the builder reads names from the
 * query's own text.
 */
const RENAMED: ReadonlyArray<[RegExp, string]> = [[/\bholt_winters(?=\s*\()/g, "day_of_month"]];

/** The tree of a query; throws a parse error at lezer's first error-recovery node. */
export function syntaxTree(query: string): SyntaxNode {
  const masked = RENAMED.reduce((q, [re, known]) => q.replace(re, known), query);
  const tree = parser.parse(masked);
  let error: { from: number; to: number } | undefined;
  tree.iterate({
    enter: (n) => {
      if (error) return false;
      if (n.type.isError) error = { from: n.from, to: n.to };
      return undefined;
    },
  });
  if (error) throw parseError(query, error.from, `unexpected ${snippet(query, error.from, error.to)}`);
  return tree.topNode;
}

function snippet(query: string, from: number, to: number): string {
  const text = (to > from ? query.slice(from, to) : query.slice(from)).trim();
  if (text === "") return "end of input";
  const token = /^[\w.:]+|^\S/.exec(text)?.[0] ?? text;
  return JSON.stringify(token);
}

/** The node's children, comments left out. */
export function kids(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) if (c.name !== "LineComment") out.push(c);
  return out;
}

export function textOf(query: string, node: SyntaxNode): string {
  return query.slice(node.from, node.to);
}

/** A 400 (`bad_data`): the query is not valid PromQL, or its types do not fit. */
export function parseError(query: string, at: number, what: string): DashboardError {
  const pos = Math.min(at, query.length) + 1;
  return new DashboardError("TM_PROMQL_PARSE", `parse error at char ${pos}: ${what}`);
}

/** A 422 (`execution`): valid PromQL that tidemark does not evaluate. */
export function unsupported(what: string): DashboardError {
  return new DashboardError(
    "TM_PROMQL_UNSUPPORTED",
    `${what} (tidemark answers Prometheus 2.42's PromQL over floats: see docs/prometheus-api.md)`,
  );
}
