/** `sum`, `avg`, `min`, `max`, `count`, `topk` with `by` / `without`, as Prometheus computes them. */
import { DashboardError } from "../errors.js";
import type { AggregateExpr } from "./ast.js";
import { compareLabels, METRIC_NAME, pick, signature, type Labels } from "./labels.js";
import type { Sample } from "./values.js";

interface Group {
  labels: Labels;
  members: Sample[];
}

/** Per aggregation, each input label set's group labels and their signature (reused at every step). */
const groupKeys = new WeakMap<AggregateExpr, WeakMap<Labels, [Labels, string]>>();

export function aggregate(e: AggregateExpr, samples: readonly Sample[], k: number | undefined): Sample[] {
  const keep = e.without
    ? (n: string) => n !== METRIC_NAME && !e.grouping.includes(n)
    : (n: string) => e.grouping.includes(n);
  let keys = groupKeys.get(e);
  if (!keys) groupKeys.set(e, (keys = new WeakMap()));
  const groups = new Map<string, Group>();
  for (const s of samples) {
    let key = keys.get(s.labels);
    if (!key) {
      const picked = pick(s.labels, keep);
      keys.set(s.labels, (key = [picked, signature(picked)]));
    }
    const [labels, sig] = key;
    let g = groups.get(sig);
    if (!g) groups.set(sig, (g = { labels, members: [] }));
    g.members.push(s);
  }
  const out: Sample[] = [];
  for (const g of groups.values()) {
    if (e.op === "topk") out.push(...topk(g.members, k ?? 0));
    else out.push({ labels: g.labels, value: reduce(e.op, g.members) });
  }
  return out;
}

function reduce(op: Exclude<AggregateExpr["op"], "topk">, members: readonly Sample[]): number {
  switch (op) {
    case "sum":
      return kahanSum(members.map((s) => s.value));
    case "avg":
      return kahanSum(members.map((s) => s.value)) / members.length;
    case "count":
      return members.length;
    case "min":
    case "max": {
      let best = NaN;
      for (const { value } of members)
        if (Number.isNaN(best) || (op === "max" ? value > best : value < best)) best = value;
      return best;
    }
  }
}

/** The k largest (NaN last; ties by labels, so answers are stable). */
function topk(members: readonly Sample[], k: number): Sample[] {
  if (k < 1) return [];
  const order = (a: Sample, b: Sample): number => {
    const an = Number.isNaN(a.value);
    const bn = Number.isNaN(b.value);
    if (an || bn) return an === bn ? compareLabels(a.labels, b.labels) : an ? 1 : -1;
    return b.value - a.value || compareLabels(a.labels, b.labels);
  };
  return [...members].sort(order).slice(0, k);
}

/** topk's k at one evaluation: a whole number (truncated, as Prometheus does). */
export function topkParam(v: number): number {
  if (Number.isNaN(v)) throw new DashboardError("TM_PROMQL_EXECUTION", "topk: parameter value is NaN");
  return Math.trunc(Math.max(Math.min(v, Number.MAX_SAFE_INTEGER), -1));
}

/** Kahan–Babuška summation, as Prometheus sums. */
export function kahanSum(values: readonly number[]): number {
  let sum = 0;
  let c = 0;
  for (const v of values) {
    const t = sum + v;
    if (!Number.isFinite(t)) {
      sum = t;
      c = 0;
      continue;
    }
    c += Math.abs(sum) >= Math.abs(v) ? sum - t + v : v - t + sum;
    sum = t;
  }
  return Number.isFinite(sum) ? sum + c : sum;
}
