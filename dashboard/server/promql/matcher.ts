/**
 * Label matchers `=`, `!=`, `=~`, `!~`. Regexes are RE2 (linear time, no backtracking: a crafted
 * matcher cannot block the server; docs/decisions/0042-query-limits.md), fully anchored and `.`
 * matches a newline, as in Prometheus (`^(?s:re)$`); RE2's flags such as a leading `(?i)` apply
 * (docs/prometheus-api.md, "PromQL").
 */
import { RE2JS } from "re2js";
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
  const matches = memo(anchored(value));
  return op === "=~" ? { name, op, value, test: (v) => matches(v) } : { name, op, value, test: (v) => !matches(v) };
}

/** Distinct label values remembered per matcher: RE2 in JavaScript costs about 1–3 µs a match, and values repeat across series. */
const MEMO_MAX = 10_000;

function memo(re: RE2JS): (v: string) => boolean {
  const seen = new Map<string, boolean>();
  return (v) => {
    let hit = seen.get(v);
    if (hit === undefined) {
      hit = re.matches(v);
      if (seen.size < MEMO_MAX) seen.set(v, hit);
    }
    return hit;
  };
}

function anchored(source: string): RE2JS {
  try {
    return RE2JS.compile(`^(?s:${source})$`);
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
