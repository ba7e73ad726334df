/**
 * A counted bound on a query's nesting, checked before parsing: a parser's error recovery on
 * thousands of open parentheses holds the event loop for most of a second (docs/prometheus-api.md,
 * "Query limits"). One pass over the text; string literals and comments are skipped.
 */
import { DashboardError } from "../errors.js";

/** At most this many open `(`, `[` and `{` at once. */
export const MAX_NESTING = 256;

export function checkNesting(query: string): void {
  let depth = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (c === '"' || c === "'" || c === "`") i = endOfString(query, i, c);
    else if (c === "#") i = query.indexOf("\n", i) < 0 ? query.length : query.indexOf("\n", i);
    else if (c === "(" || c === "[" || c === "{") {
      if (++depth > MAX_NESTING)
        throw new DashboardError(
          "TM_PROMQL_PARSE",
          `parse error at char ${i + 1}: the query nests deeper than ${MAX_NESTING} levels of (), [] and {}: flatten it`,
        );
    } else if (c === ")" || c === "]" || c === "}") depth--;
  }
}

/** The index of the quote that closes the string opened at `from` (backquoted strings have no escapes). */
function endOfString(query: string, from: number, quote: string): number {
  for (let i = from + 1; i < query.length; i++) {
    if (query[i] === "\\" && quote !== "`") i++;
    else if (query[i] === quote) return i;
  }
  return query.length;
}
