/** label_replace and label_join, as Prometheus 2.42 (promql/functions.go): Go regex expansion of `$1`, `${name}`. */
import { DashboardError } from "../errors.js";
import type { Labels } from "./labels.js";
import type { Sample } from "./values.js";

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function execution(message: string): DashboardError {
  return new DashboardError("TM_PROMQL_EXECUTION", message);
}

/** A compiled label_replace(v, dst, replacement, src, regex). */
export function labelReplacer(dst: string, repl: string, src: string, regex: string): (s: Sample) => Sample {
  let re: RegExp;
  try {
    // Go's (?P<name>…) is JavaScript's (?<name>…); a leading (?i) is the i flag (as matcher.ts reads it).
    const insensitive = regex.startsWith("(?i)");
    const body = (insensitive ? regex.slice(4) : regex).replace(/\(\?P</g, "(?<");
    re = new RegExp(`^(?:${body})$`, insensitive ? "si" : "s");
  } catch {
    throw execution(`invalid regular expression in label_replace(): ${regex}`);
  }
  if (!LABEL_NAME.test(dst)) throw execution(`invalid destination label name in label_replace(): ${dst}`);
  const memo = new WeakMap<Labels, Labels>();
  return (s) => {
    let labels = memo.get(s.labels);
    if (!labels) {
      const m = re.exec(s.labels[src] ?? "");
      labels = m ? withLabel(s.labels, dst, expand(repl, m)) : s.labels;
      memo.set(s.labels, labels);
    }
    return { labels, value: s.value };
  };
}

/** A compiled label_join(v, dst, separator, src…). */
export function labelJoiner(dst: string, sep: string, srcs: readonly string[]): (s: Sample) => Sample {
  for (const src of srcs)
    if (!LABEL_NAME.test(src)) throw execution(`invalid source label name in label_join(): ${src}`);
  if (!LABEL_NAME.test(dst)) throw execution(`invalid destination label name in label_join(): ${dst}`);
  const memo = new WeakMap<Labels, Labels>();
  return (s) => {
    let labels = memo.get(s.labels);
    if (!labels) {
      labels = withLabel(s.labels, dst, srcs.map((n) => s.labels[n] ?? "").join(sep));
      memo.set(s.labels, labels);
    }
    return { labels, value: s.value };
  };
}

/** The labels with `name` set to value, or without it when value is empty. */
function withLabel(labels: Labels, name: string, value: string): Labels {
  const out: Record<string, string> = {};
  for (const [n, v] of Object.entries(labels)) if (n !== name && v !== "") out[n] = v;
  if (value !== "") out[name] = value;
  return out;
}

/** Go's Regexp.Expand: `$$`, `${name}`, `$name` (the longest run of word characters), numbers as groups. */
export function expand(template: string, m: RegExpExecArray): string {
  let out = "";
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string;
    if (c !== "$") {
      out += c;
      continue;
    }
    const rest = template.slice(i + 1);
    if (rest.startsWith("$")) {
      out += "$";
      i++;
      continue;
    }
    const braced = /^\{([a-zA-Z0-9_]+)\}/.exec(rest);
    const bare = /^[a-zA-Z0-9_]+/.exec(rest);
    const name = braced ? braced[1] : bare?.[0];
    if (name === undefined) {
      out += "$";
      continue;
    }
    i += braced ? (braced[0] as string).length : name.length;
    out += /^\d+$/.test(name) ? (m[Number(name)] ?? "") : (m.groups?.[name] ?? "");
  }
  return out;
}
