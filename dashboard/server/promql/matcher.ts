/**
 * Label matchers `=`, `!=`, `=~`, `!~`. Regexes are fully anchored and `.` matches a newline, as in
 * Prometheus (`^(?s:re)$`); a leading `(?i)` makes the match case-insensitive (docs/prometheus-api.md,
 * "PromQL").
 */
import { DashboardError } from "../errors.js";
import type { Labels } from "./labels.js";

export type MatchOp = "=" | "!=" | "=~" | "!~";

export interface Matcher {
  readonly name: string;
  readonly op: MatchOp;
  readonly value: string;
  /** True when the matcher accepts a label's value ("" when the label is absent). */
  readonly test: (value: string) => boolean;
}

export function matcher(name: string, op: MatchOp, value: string): Matcher {
  if (op === "=") return { name, op, value, test: (v) => v === value };
  if (op === "!=") return { name, op, value, test: (v) => v !== value };
  const re = anchored(value);
  return op === "=~" ? { name, op, value, test: (v) => re.test(v) } : { name, op, value, test: (v) => !re.test(v) };
}

function anchored(source: string): RegExp {
  const insensitive = source.startsWith("(?i)");
  const body = insensitive ? source.slice(4) : source;
  try {
    return new RegExp(`^(?:${body})$`, insensitive ? "si" : "s");
  } catch (err) {
    throw new DashboardError(
      "TM_PROMQL_PARSE",
      `invalid regular expression ${JSON.stringify(source)}: ${(err as Error).message}`,
    );
  }
}

/** True when every matcher accepts the labels. */
export function matchesAll(labels: Labels, matchers: readonly Matcher[]): boolean {
  for (const m of matchers) if (!m.test(labels[m.name] ?? "")) return false;
  return true;
}
