/** Vector selectors, durations and grouping labels from lezer-promql's tree (see parse.ts). */
import type { SelectorExpr } from "./ast.js";
import { METRIC_NAME } from "./labels.js";
import { durationMs, stringLiteral } from "./literals.js";
import { matcher, type MatchOp, type Matcher } from "./matcher.js";
import { kids, parseError, textOf, unsupported, type SyntaxNode } from "./syntax.js";

const MATCH_OPS: Record<string, MatchOp> = { EqlSingle: "=", Neq: "!=", EqlRegex: "=~", NeqRegex: "!~" };

/** `name{a="b", c=~"d"}`, `{__name__="x"}` or `{"x"}`, with the offset already read. */
export function selectorOf(q: string, n: SyntaxNode, offsetMs: number): SelectorExpr {
  const matchers: Matcher[] = [];
  let name: string | undefined;
  const setName = (at: SyntaxNode, value: string): void => {
    if (name !== undefined)
      throw parseError(
        q,
        at.from,
        `metric name must not be set twice: ${JSON.stringify(name)} or ${JSON.stringify(value)}`,
      );
    name = value;
    matchers.push(matcher(METRIC_NAME, "=", value));
  };
  for (const part of kids(n)) {
    if (part.name === "Identifier" || part.name === "MetricName") setName(part, textOf(q, part));
    else if (part.name === "LabelMatchers") for (const m of kids(part)) readMatcher(q, m, matchers, setName);
  }
  const named = matchers.filter((m) => m.name === METRIC_NAME);
  if (name !== undefined && named.length > 1)
    throw parseError(
      q,
      n.from,
      `metric name must not be set twice: ${JSON.stringify(name)} or ${JSON.stringify(named[1]?.value)}`,
    );
  if (!matchers.some((m) => !m.test("")))
    throw parseError(q, n.from, "vector selector must contain at least one non-empty matcher");
  return { type: "selector", matchers, offsetMs, at: undefined, text: textOf(q, n) };
}

function readMatcher(
  q: string,
  m: SyntaxNode,
  matchers: Matcher[],
  setName: (at: SyntaxNode, value: string) => void,
): void {
  if (m.name === "QuotedLabelName") return setName(m, stringOf(q, m));
  const [label, op, value] = kids(m);
  if (!label || !op || !value) throw parseError(q, m.from, `bad label matcher ${textOf(q, m)}`);
  const labelName = label.name === "QuotedLabelName" ? stringOf(q, label) : textOf(q, label);
  const matchOp = MATCH_OPS[kids(op)[0]?.name ?? ""];
  if (!matchOp) throw parseError(q, op.from, `bad match operator ${textOf(q, op)}`);
  matchers.push(matcher(labelName, matchOp, stringOf(q, value)));
}

function stringOf(q: string, n: SyntaxNode): string {
  const lit = n.name === "StringLiteral" ? n : (kids(n)[0] ?? n);
  const v = stringLiteral(textOf(q, lit));
  if (v === undefined) throw parseError(q, n.from, `bad string literal ${textOf(q, lit)}`);
  return v;
}

/** A range's duration (`[5m]`, `[1h30m]`), ms. */
export function durationOf(q: string, n: SyntaxNode): number {
  const [lit, ...rest] = kids(n);
  if (!lit || rest.length > 0 || lit.name !== "NumberDurationLiteralInDurationContext")
    throw unsupported(
      `duration expression ${JSON.stringify(textOf(q, n))} is not supported: write a duration such as 5m`,
    );
  const ms = durationMs(textOf(q, lit));
  if (ms === undefined) throw parseError(q, n.from, `bad duration ${JSON.stringify(textOf(q, lit))}`);
  return ms;
}

/** An offset's duration, ms; negative offsets look forward, as in Prometheus. */
export function offsetOf(q: string, n: SyntaxNode): number {
  const parts = kids(n);
  const [first, second] = parts;
  if (first?.name === "UnaryOp" && second && parts.length === 2)
    return (textOf(q, first) === "-" ? -1 : 1) * offsetOf(q, second);
  if (first?.name === "OffsetDurationExpr" && parts.length === 1) return offsetOf(q, first);
  return durationOf(q, n);
}

/** `(a, b)` of `by`, `without`, `on`, `ignoring`. */
export function groupingOf(q: string, n: SyntaxNode): string[] {
  return kids(n).map((l) => (l.name === "QuotedLabelName" ? stringOf(q, l) : textOf(q, l)));
}
