/**
 * Function calls at one step: functions of a range vector (a range selector or a subquery) run per
 * series over its points (range-functions.ts, rate-functions.ts); the others over instant vectors
 * and scalars (instant-functions.ts, label-functions.ts), as Prometheus 2.42 (promql/engine.go).
 */
import type { CallExpr, Expr, RangeExpr, SelectorExpr, SubqueryExpr } from "./ast.js";
import type { EvalContext } from "./eval-context.js";
import { unique } from "./range-points.js";
import { histogramQuantile } from "./histogram.js";
import {
  clamp,
  dateFunction,
  isDateFunction,
  isMathFunction,
  mathFunction,
  round,
  sortByValue,
  mapValues,
} from "./instant-functions.js";
import { labelJoiner, labelReplacer } from "./label-functions.js";
import { dropName, type Labels } from "./labels.js";
import { kahanSum } from "./stats.js";
import { RANGE_FUNCTIONS, type RangePoints } from "./range-functions.js";
import { COUNT_FUNCTIONS, countsOverRange, type CountFunction } from "./rate-functions.js";
import type { Sample, Value } from "./values.js";

const compiled = new WeakMap<CallExpr, (s: Sample) => Sample>();

export function callAt(ev: EvalContext, e: CallExpr, t: number): Value {
  const fn = e.fn;
  if (fn === "time") return { type: "scalar", value: t / 1000 };
  if (fn === "pi") return { type: "scalar", value: Math.PI };
  if (fn === "scalar") {
    const v = ev.vector(e.args[0] as Expr, t);
    return { type: "scalar", value: v.length === 1 ? (v[0] as Sample).value : NaN };
  }
  const matrixArg = e.args.findIndex((a) => a.type === "range" || a.type === "subquery");
  const samples = matrixArg >= 0 ? rangeCall(ev, e, matrixArg, t) : vectorCall(ev, e, t);
  const arg = e.args[matrixArg];
  // sort keeps its input's labels; a range selector's series stay distinct when no two differ only by name.
  const distinct =
    fn === "sort" || fn === "sort_desc" || (arg?.type === "range" && ev.distinctWithoutName(arg.selector));
  return { type: "vector", samples: distinct ? samples : unique(samples) };
}

function vectorCall(ev: EvalContext, e: CallExpr, t: number): Sample[] {
  const [first, ...rest] = e.args;
  const fn = e.fn;
  const scalars = (): number[] => rest.map((a) => ev.scalar(a, t));
  if (fn === "vector") return [{ labels: {}, value: ev.scalar(first as Expr, t) }];
  if (isDateFunction(fn)) return dateFunction(fn, first ? ev.vector(first, t) : undefined, t);
  if (fn === "histogram_quantile") return histogramQuantile(ev.scalar(first as Expr, t), ev.vector(rest[0] as Expr, t));
  const v = ev.vector(first as Expr, t);
  if (isMathFunction(fn)) return mathFunction(fn, v);
  switch (fn) {
    case "timestamp": {
      const own = (first as Expr).type === "selector";
      return v.map((s) => ({ labels: dropName(s.labels), value: (own ? (s.t ?? t) : t) / 1000 }));
    }
    case "clamp": {
      const [min, max] = scalars() as [number, number];
      return clamp(v, min, max);
    }
    case "clamp_min":
      return mapValues(v, (x) => goMaxMin(x, scalars()[0] as number, true));
    case "clamp_max":
      return mapValues(v, (x) => goMaxMin(x, scalars()[0] as number, false));
    case "round":
      return round(v, rest.length > 0 ? (scalars()[0] as number) : 1);
    case "sort":
    case "sort_desc":
      return sortByValue(v, fn === "sort_desc");
    case "absent":
      return v.length > 0 ? [] : [{ labels: absentLabels(first as Expr), value: 1 }];
    case "label_replace":
    case "label_join":
      return v.map(labeller(e));
    default:
      throw new Error(`no evaluation for function ${fn}`);
  }
}

function goMaxMin(x: number, bound: number, max: boolean): number {
  if (Number.isNaN(x) || Number.isNaN(bound)) return NaN;
  return max ? Math.max(bound, x) : Math.min(bound, x);
}

function labeller(e: CallExpr): (s: Sample) => Sample {
  let f = compiled.get(e);
  if (!f) {
    const str = e.args.slice(1).map((a) => (a.type === "string" ? a.value : ""));
    f =
      e.fn === "label_replace"
        ? labelReplacer(str[0] as string, str[1] as string, str[2] as string, str[3] as string)
        : labelJoiner(str[0] as string, str[1] as string, str.slice(2));
    compiled.set(e, f);
  }
  return f;
}

/** absent()'s labels: the selector's `=` matchers (a label matched twice is left out), as createLabelsForAbsentFunction. */
function absentLabels(e: Expr): Labels {
  const sel: SelectorExpr | undefined = e.type === "selector" ? e : e.type === "range" ? e.selector : undefined;
  if (!sel) return {};
  const out: Record<string, string> = {};
  const has = new Set<string>();
  for (const m of sel.matchers) {
    if (m.name === "__name__") continue;
    if (m.op === "=" && !has.has(m.name)) {
      if (m.value !== "") out[m.name] = m.value;
      else delete out[m.name];
      has.add(m.name);
    } else delete out[m.name];
  }
  return out;
}

/** A function of a range vector: per series with points in the range, one sample. */
function rangeCall(ev: EvalContext, e: CallExpr, index: number, t: number): Sample[] {
  const arg = e.args[index] as RangeExpr | SubqueryExpr;
  const scalars = e.args.map((a, i) => (i === index ? NaN : ev.scalar(a, t))).filter((_, i) => i !== index);
  if (arg.type === "range" && COUNT_FUNCTIONS.includes(e.fn)) return counts(ev, e.fn as CountFunction, arg, t);
  const f = RANGE_FUNCTIONS[e.fn];
  const keepName = e.fn === "last_over_time";
  const out: Sample[] = [];
  const each = (labels: Labels, p: RangePoints): void => {
    if (p.hi <= p.lo) return;
    const v = f ? f(p) : 1;
    if (v !== undefined) out.push({ labels: keepName ? labels : dropName(labels), value: v });
  };
  if (arg.type === "range") {
    const sel = arg.selector;
    const endMs = ev.evalTime(sel.at, t) - sel.offsetMs;
    const startMs = endMs - arg.rangeMs;
    for (const c of ev.columns(sel, arg.rangeMs)) {
      const lo = c.seek(0, startMs - 1);
      const hi = c.seek(1, endMs);
      c.touch(lo, hi);
      each(c.view.labels, { times: c.times, values: c.values, lo, hi, startMs, endMs, stepMs: t, scalars });
    }
  } else {
    const endMs = ev.evalTime(arg.at, t) - arg.offsetMs;
    const startMs = endMs - arg.rangeMs;
    for (const s of ev.subquery(arg, t))
      each(s.labels, {
        times: s.times,
        values: s.values,
        lo: 0,
        hi: s.times.length,
        startMs,
        endMs,
        stepMs: t,
        scalars,
      });
  }
  if (e.fn !== "absent_over_time") return out;
  return out.length > 0 ? [] : [{ labels: absentLabels(arg), value: 1 }];
}

/** rate, increase, irate over the window counts whose sample lies in (t − offset − d, t − offset]. */
function counts(ev: EvalContext, fn: CountFunction, arg: RangeExpr, t: number): Sample[] {
  const sel = arg.selector;
  const ref = ev.evalTime(sel.at, t) - sel.offsetMs;
  const out: Sample[] = [];
  for (const c of ev.columns(sel, arg.rangeMs)) {
    const lo = c.seek(0, ref - arg.rangeMs);
    const hi = c.seek(1, ref);
    c.touch(lo, hi);
    const sums = c.exactSums();
    const sum = sums ? (sums[hi] as number) - (sums[lo] as number) : newestFirstSum(c.values, lo, hi);
    const v = countsOverRange(fn, c.view, sum, c.values[hi - 1] as number, hi - lo, arg.rangeMs, arg.text);
    if (v !== undefined) out.push({ labels: dropName(c.view.labels), value: v });
  }
  return out;
}

/** The values [lo, hi) added newest first (as tidemark always summed them). */
function newestFirstSum(values: Float64Array, lo: number, hi: number): number {
  const reversed = Array.from(values.subarray(lo, hi)).reverse();
  return kahanSum(reversed);
}
