/**
 * Evaluates the subset against a Queryable at one time (instant query) or at each step of a range
 * (range query: every step is an instant evaluation, as in Prometheus). Selectors are resolved once
 * per query, and each selected series' samples in the span the query reaches are read once into
 * columns that every step searches (docs/prometheus-api.md, "Sizing"). Pure: the time comes in as
 * an argument.
 */
import { DashboardError } from "../errors.js";
import { typeName, typeOf, type Expr, type RangeExpr, type SelectorExpr } from "./ast.js";
import { aggregate, topkParam } from "./aggregate.js";
import { binary } from "./binary.js";
import { compareLabels, dropName, signature } from "./labels.js";
import type { Labels } from "./labels.js";
import type { Queryable, SeriesView } from "./queryable.js";
import { countsOverRange, overRange } from "./range-functions.js";
import { SampleColumns } from "./sample-columns.js";
import type { RangeSeries, Sample, Value } from "./values.js";

/** Prometheus's default lookback (docs/decisions/0011-prometheus-api.md, "Lookback"). */
export const DEFAULT_LOOKBACK_MS = 5 * 60_000;

export interface EvalOptions {
  /** How far back an instant selector looks for a sample; a series' own window size if longer. */
  readonly lookbackMs?: number;
}

/** An instant query's value at `timeMs`: instant vectors sorted by labels (topk keeps its order). */
export function evaluateInstant(expr: Expr, source: Queryable, timeMs: number, opts: EvalOptions = {}): Value {
  const v = new Evaluation(source, opts, timeMs, timeMs).at(expr, timeMs);
  const ordered = expr.type === "aggregate" && expr.op === "topk";
  if (v.type === "vector" && !ordered) v.samples.sort((a, b) => compareLabels(a.labels, b.labels));
  if (v.type === "matrix") v.series.sort((a, b) => compareLabels(a.labels, b.labels));
  return v;
}

/** A range query's series, one point per step at which the expression has a value, sorted by labels. */
export function evaluateRange(
  expr: Expr,
  source: Queryable,
  range: { startMs: number; endMs: number; stepMs: number },
  opts: EvalOptions = {},
): RangeSeries[] {
  const t = typeOf(expr);
  if (t !== "scalar" && t !== "vector")
    throw new DashboardError(
      "TM_PROMQL_PARSE",
      `invalid expression type "${typeName(t)}" for range query, must be Scalar or instant Vector`,
    );
  const ev = new Evaluation(source, opts, range.startMs, range.endMs);
  if (expr.type === "selector") return ev.selectorRange(expr, range).sort((a, b) => compareLabels(a.labels, b.labels));
  const points = new RangePoints();
  const none: Labels = {};
  for (let ts = range.startMs; ts <= range.endMs; ts += range.stepMs) {
    const v = ev.at(expr, ts);
    if (v.type === "scalar") points.add(none, ts, v.value);
    else if (v.type === "vector") for (const s of v.samples) points.add(s.labels, ts, s.value);
  }
  return points.series().sort((a, b) => compareLabels(a.labels, b.labels));
}

/**
 * A range result's points grouped by label set. Label sets are looked up by identity first: the
 * engine hands out the same objects step after step (memoized labels), so the signature is only
 * computed for a label set it has not seen.
 */
class RangePoints {
  private readonly bySig = new Map<string, RangeSeries>();
  private readonly byLabels = new Map<Labels, RangeSeries>();

  add(labels: Labels, ts: number, value: number): void {
    let series = this.byLabels.get(labels);
    if (!series) {
      const sig = signature(labels);
      series = this.bySig.get(sig);
      if (!series) this.bySig.set(sig, (series = { labels, times: [], values: [] }));
      this.byLabels.set(labels, series);
    }
    series.times.push(ts);
    series.values.push(value);
  }

  series(): RangeSeries[] {
    return [...this.bySig.values()];
  }
}

class Evaluation {
  private readonly views = new Map<SelectorExpr, readonly SeriesView[]>();
  private readonly columnsOf = new Map<SelectorExpr, readonly SampleColumns[]>();
  private readonly lookbackMs: number;

  /** Evaluates at times in [fromMs, toMs] only: the columns hold the samples that span reaches. */
  constructor(
    private readonly source: Queryable,
    opts: EvalOptions,
    private readonly fromMs: number,
    private readonly toMs: number,
  ) {
    this.lookbackMs = opts.lookbackMs ?? DEFAULT_LOOKBACK_MS;
  }

  at(e: Expr, t: number): Value {
    switch (e.type) {
      case "number":
        return { type: "scalar", value: e.value };
      case "string":
        return { type: "string", value: e.value };
      case "selector":
        return { type: "vector", samples: this.instant(e, t) };
      case "range":
        return { type: "matrix", series: this.matrix(e, t) };
      case "unary": {
        const v = this.at(e.expr, t);
        if (e.op === "+") return v;
        if (v.type === "scalar") return { type: "scalar", value: -v.value };
        if (v.type === "vector")
          return { type: "vector", samples: v.samples.map((s) => ({ labels: dropName(s.labels), value: -s.value })) };
        return v;
      }
      case "binary":
        return binary(e, this.at(e.lhs, t), this.at(e.rhs, t));
      case "aggregate": {
        const param = e.param ? this.at(e.param, t) : undefined;
        const k = param?.type === "scalar" ? topkParam(param.value) : undefined;
        return { type: "vector", samples: aggregate(e, this.vector(e.expr, t), k) };
      }
      case "call":
        return { type: "vector", samples: this.call(e.fn, e.arg, t) };
    }
  }

  private vector(e: Expr, t: number): Sample[] {
    const v = this.at(e, t);
    return v.type === "vector" ? v.samples : [];
  }

  private select(e: SelectorExpr): readonly SeriesView[] {
    let views = this.views.get(e);
    if (!views) this.views.set(e, (views = this.source.select(e.matchers)));
    return views;
  }

  /** The instant lookback of a series: the default, or its window size when longer. */
  private lookback(view: SeriesView): number {
    return Math.max(this.lookbackMs, view.stepMs);
  }

  /**
   * The selected series' present samples over what the query's steps reach: (from − offset − reach,
   * to − offset], the reach being a range selector's range or the instant lookback.
   */
  private columns(e: SelectorExpr, rangeMs?: number): readonly SampleColumns[] {
    let cols = this.columnsOf.get(e);
    if (!cols) {
      const to = this.toMs - e.offsetMs;
      const from = this.fromMs - e.offsetMs;
      cols = this.select(e).map((v) => new SampleColumns(v, from - (rangeMs ?? this.lookback(v)), to));
      this.columnsOf.set(e, cols);
    }
    return cols;
  }

  /** Per series, the newest sample at or before t − offset within the lookback (the series' window size if longer). */
  private instant(e: SelectorExpr, t: number): Sample[] {
    const at = t - e.offsetMs;
    const out: Sample[] = [];
    for (const c of this.columns(e)) {
      const j = c.seek(1, at) - 1;
      if (j < 0 || (c.times[j] as number) <= at - this.lookback(c.view)) continue;
      const i = c.rows[j] as number;
      c.view.touch(i);
      out.push({ labels: c.view.sampleLabels(i), value: c.values[j] as number });
    }
    return out;
  }

  /**
   * A plain selector over a range query's steps, as instant() at each step gives it, walking each
   * series' columns once with a cursor instead of searching them per step.
   */
  selectorRange(e: SelectorExpr, range: { startMs: number; endMs: number; stepMs: number }): RangeSeries[] {
    const out: RangeSeries[] = [];
    for (const c of this.columns(e)) {
      const lookback = this.lookback(c.view);
      const points = new RangePoints();
      const { times, values, rows } = c;
      let next = 0;
      for (let ts = range.startMs; ts <= range.endMs; ts += range.stepMs) {
        const at = ts - e.offsetMs;
        while (next < c.length && (times[next] as number) <= at) next++;
        const j = next - 1;
        if (j < 0 || (times[j] as number) <= at - lookback) continue;
        const i = rows[j] as number;
        c.view.touch(i);
        points.add(c.view.sampleLabels(i), ts, values[j] as number);
      }
      out.push(...points.series());
    }
    return out;
  }

  /** Each series' samples in (t − offset − range, t − offset], oldest first. */
  private matrix(e: RangeExpr, t: number): RangeSeries[] {
    const at = t - e.selector.offsetMs;
    const out: RangeSeries[] = [];
    for (const c of this.columns(e.selector, e.rangeMs)) {
      const lo = c.upperBound(at - e.rangeMs);
      const hi = c.upperBound(at);
      if (lo >= hi) continue;
      c.touch(lo, hi);
      out.push({
        labels: c.view.labels,
        times: Array.from(c.times.subarray(lo, hi)),
        values: Array.from(c.values.subarray(lo, hi)),
      });
    }
    return out;
  }

  private call(fn: Parameters<typeof overRange>[0], arg: RangeExpr, t: number): Sample[] {
    const at = t - arg.selector.offsetMs;
    const out: Sample[] = [];
    const values: number[] = [];
    for (const c of this.columns(arg.selector, arg.rangeMs)) {
      const lo = c.seek(0, at - arg.rangeMs);
      const hi = c.seek(1, at);
      c.touch(lo, hi);
      const sums = fn === "rate" || fn === "increase" ? c.exactSums() : null;
      let v: number | undefined;
      if (sums) {
        const sum = (sums[hi] as number) - (sums[lo] as number);
        v = countsOverRange(fn as "rate" | "increase", c.view, sum, hi - lo, arg.rangeMs, arg.text);
      } else {
        values.length = 0;
        for (let j = hi - 1; j >= lo; j--) values.push(c.values[j] as number); // newest first, as always summed
        v = overRange(fn, c.view, values, arg.rangeMs, arg.text);
      }
      if (v !== undefined) out.push({ labels: dropName(c.view.labels), value: v });
    }
    return out;
  }
}
