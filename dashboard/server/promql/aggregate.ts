/**
 * Aggregations with `by` / `without`, as Prometheus 2.42 computes them (promql/engine.go,
 * aggregation()): groups in the order their first sample comes, running means and variances,
 * topk/bottomk through Go's heap (heap.ts), quantile interpolated (docs/prometheus-api.md, "PromQL").
 */
import { DashboardError } from "../errors.js";
import type { AggregateExpr } from "./ast.js";
import { bottomk, topk } from "./heap.js";
import { METRIC_NAME, pick, signature, type Labels } from "./labels.js";
import { quantile } from "./stats.js";
import { formatValue, type Sample } from "./values.js";

interface Group {
  labels: Labels;
  members: Sample[];
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Per aggregation, each input label set's group labels and their signature (reused at every step). */
const groupKeys = new WeakMap<AggregateExpr, WeakMap<Labels, [Labels, string]>>();

/** `param` is topk/bottomk's k, quantile's φ or count_values' label, evaluated at this step. */
export function aggregate(e: AggregateExpr, input: readonly Sample[], param: number | string | undefined): Sample[] {
  let samples = input;
  let grouping = e.grouping;
  if (e.op === "count_values") {
    const label = param as string;
    if (!LABEL_NAME.test(label)) throw new DashboardError("TM_PROMQL_EXECUTION", `invalid label name "${label}"`);
    samples = input.map((s) => ({ labels: { ...s.labels, [label]: formatValue(s.value) }, value: s.value }));
    if (!e.without) grouping = [...grouping, label];
  }
  let k = 0;
  if (e.op === "topk" || e.op === "bottomk") {
    k = intParam(param as number);
    if (k < 1) return [];
  }
  const groups = groupsOf(e, samples, grouping, e.op !== "count_values");
  const out: Sample[] = [];
  for (const g of groups) {
    if (e.op === "topk") out.push(...topk(g.members, k));
    else if (e.op === "bottomk") out.push(...bottomk(g.members, k));
    else out.push({ labels: g.labels, value: reduce(e.op, g.members, param as number) });
  }
  return out;
}

function groupsOf(e: AggregateExpr, samples: readonly Sample[], grouping: readonly string[], memo: boolean): Group[] {
  const keep = e.without
    ? (n: string) => n !== METRIC_NAME && !grouping.includes(n)
    : (n: string) => grouping.includes(n);
  let keys = groupKeys.get(e);
  if (!keys) groupKeys.set(e, (keys = new WeakMap()));
  const groups = new Map<string, Group>();
  for (const s of samples) {
    let key = memo ? keys.get(s.labels) : undefined;
    if (!key) {
      const picked = pick(s.labels, keep);
      key = [picked, signature(picked)];
      if (memo) keys.set(s.labels, key);
    }
    const [labels, sig] = key;
    let g = groups.get(sig);
    if (!g) groups.set(sig, (g = { labels, members: [] }));
    g.members.push(s);
  }
  return [...groups.values()];
}

function reduce(op: AggregateExpr["op"], members: readonly Sample[], q: number): number {
  const first = (members[0] as Sample).value;
  switch (op) {
    case "sum": {
      let sum = first;
      for (let i = 1; i < members.length; i++) sum += (members[i] as Sample).value;
      return sum;
    }
    case "avg":
      return mean(members);
    case "count":
    case "count_values":
      return members.length;
    case "group":
      return 1;
    case "min":
    case "max": {
      let best = first;
      for (const { value } of members)
        if ((op === "max" ? best < value : best > value) || Number.isNaN(best)) best = value;
      return best;
    }
    case "stddev":
    case "stdvar": {
      let m = first;
      let value = 0;
      for (let i = 1; i < members.length; i++) {
        const v = (members[i] as Sample).value;
        const delta = v - m;
        m += delta / (i + 1);
        value += delta * (v - m);
      }
      return op === "stdvar" ? value / members.length : Math.sqrt(value / members.length);
    }
    case "quantile":
      return quantile(
        q,
        members.map((s) => s.value),
      );
    default:
      throw new Error(`not a reducing aggregation: ${op}`);
  }
}

/** The running mean of engine.go, which keeps an infinite mean instead of turning it into NaN. */
function mean(members: readonly Sample[]): number {
  let m = (members[0] as Sample).value;
  for (let i = 1; i < members.length; i++) {
    const v = (members[i] as Sample).value;
    const count = i + 1;
    if (!Number.isFinite(m) && !Number.isNaN(m)) {
      if (!Number.isFinite(v) && !Number.isNaN(v) && m > 0 === v > 0) continue;
      if (Number.isFinite(v)) continue;
    }
    m += v / count - m / count;
  }
  return m;
}

/** topk/bottomk's k at one step: Prometheus refuses what does not fit an int64, then truncates. */
function intParam(v: number): number {
  if (!(v <= 9.223372036854776e18 && v >= -9.223372036854776e18))
    throw new DashboardError("TM_PROMQL_EXECUTION", `Scalar value ${formatValue(v)} overflows int64`);
  return Math.trunc(v);
}
