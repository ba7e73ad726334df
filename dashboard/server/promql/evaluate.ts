/**
 * Evaluates PromQL against a Queryable at one time (instant query) or at each step of a range
 * (range query: every step is an instant evaluation, as in Prometheus 2.42). Selectors are resolved
 * once per query, and each selected series' samples in the span the query reaches are read once into
 * columns that every step searches (docs/prometheus-api.md, "Sizing"). Pure: the time comes in as
 * an argument.
 */
import { DashboardError } from "../errors.js";
import {
  typeName,
  typeOf,
  type AtModifier,
  type Expr,
  type RangeExpr,
  type SelectorExpr,
  type SubqueryExpr,
} from "./ast.js";
import { aggregate } from "./aggregate.js";
import { binary } from "./binary.js";
import { callAt } from "./eval-call.js";
import type { EvalContext } from "./eval-context.js";
import { compareLabels, dropName, signature, type Labels } from "./labels.js";
import { RangePoints, unique } from "./range-points.js";
import { subqueryAt } from "./subquery.js";
import type { Queryable, SeriesView } from "./queryable.js";
import { SampleColumns } from "./sample-columns.js";
import type { RangeSeries, Sample, Value } from "./values.js";

/** Prometheus's default lookback (docs/decisions/0011-prometheus-api.md, "Lookback"). */
export const DEFAULT_LOOKBACK_MS = 5 * 60_000;
/** A subquery's step when it gives none: Prometheus's default global evaluation interval. */
export const DEFAULT_SUBQUERY_STEP_MS = 60_000;

export interface EvalOptions {
  /** How far back an instant selector looks for a sample; a series' own window size if longer. */
  readonly lookbackMs?: number;
  /** The step of a subquery written without one (`x[5m:]`). */
  readonly subqueryStepMs?: number;
}

/** Functions and aggregations whose output order is the answer (the rest are sorted by labels). */
function ordered(e: Expr): boolean {
  if (e.type === "call") return e.fn === "sort" || e.fn === "sort_desc";
  return e.type === "aggregate" && (e.op === "topk" || e.op === "bottomk");
}

/** An instant query's value at `timeMs`: instant vectors sorted by labels (sort, sort_desc, topk, bottomk keep theirs). */
export function evaluateInstant(expr: Expr, source: Queryable, timeMs: number, opts: EvalOptions = {}): Value {
  let v = new Evaluation(source, opts, expr, timeMs, timeMs).at(expr, timeMs);
  if (v.type === "vector") {
    v = { type: "vector", samples: v.samples.map((s) => ({ labels: s.labels, value: s.value })) };
    if (!ordered(expr)) v.samples.sort((a, b) => compareLabels(a.labels, b.labels));
  }
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
  const ev = new Evaluation(source, opts, expr, range.startMs, range.endMs);
  if (expr.type === "selector" && !expr.at)
    return ev.selectorRange(expr, range).sort((a, b) => compareLabels(a.labels, b.labels));
  const points = new RangePoints();
  const none: Labels = {};
  for (let ts = range.startMs; ts <= range.endMs; ts += range.stepMs) {
    const v = ev.at(expr, ts);
    if (v.type === "scalar") points.add(none, ts, v.value);
    else if (v.type === "vector") for (const s of v.samples) points.add(s.labels, ts, s.value);
  }
  return points.series().sort((a, b) => compareLabels(a.labels, b.labels));
}

export class Evaluation implements EvalContext {
  private readonly views = new Map<SelectorExpr, readonly SeriesView[]>();
  private readonly columnsOf = new Map<SelectorExpr, readonly SampleColumns[]>();
  /** Per selector, the first and last time it is evaluated at (before its offset). */
  private readonly spans = new Map<SelectorExpr, [number, number]>();
  private readonly subqueries = new Map<SubqueryExpr, Map<number, Sample[]>>();
  private readonly distinct = new Map<SelectorExpr, boolean>();
  readonly lookbackMs: number;
  readonly subqueryStepMs: number;

  /** Evaluates `expr` at times in [startMs, endMs] only: the columns hold the samples that span reaches. */
  constructor(
    private readonly source: Queryable,
    opts: EvalOptions,
    expr: Expr,
    readonly startMs: number,
    readonly endMs: number,
  ) {
    this.lookbackMs = opts.lookbackMs ?? DEFAULT_LOOKBACK_MS;
    this.subqueryStepMs = opts.subqueryStepMs ?? DEFAULT_SUBQUERY_STEP_MS;
    this.plan(expr, startMs, endMs);
  }

  /** The time an `@` modifier fixes, else the step's. */
  evalTime(at: AtModifier | undefined, t: number): number {
    if (at === undefined) return t;
    return at === "start" ? this.startMs : at === "end" ? this.endMs : at.ms;
  }

  /** Records the span each selector is evaluated over, through subqueries and `@`. */
  private plan(e: Expr, lo: number, hi: number): void {
    switch (e.type) {
      case "selector":
        this.spans.set(e, e.at ? [this.evalTime(e.at, 0), this.evalTime(e.at, 0)] : [lo, hi]);
        return;
      case "range":
        return this.plan(e.selector, lo, hi);
      case "subquery": {
        const [l, h] = e.at ? [this.evalTime(e.at, 0), this.evalTime(e.at, 0)] : [lo, hi];
        return this.plan(e.expr, l - e.offsetMs - e.rangeMs, h - e.offsetMs);
      }
      case "unary":
        return this.plan(e.expr, lo, hi);
      case "binary":
        this.plan(e.lhs, lo, hi);
        return this.plan(e.rhs, lo, hi);
      case "aggregate":
        if (e.param) this.plan(e.param, lo, hi);
        return this.plan(e.expr, lo, hi);
      case "call":
        for (const a of e.args) this.plan(a, lo, hi);
        return;
      default:
        return;
    }
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
      case "subquery":
        return { type: "matrix", series: this.subquery(e, t) };
      case "unary": {
        const v = this.at(e.expr, t);
        if (e.op === "+") return v;
        if (v.type === "scalar") return { type: "scalar", value: -v.value };
        if (v.type === "vector")
          return {
            type: "vector",
            samples: unique(v.samples.map((s) => ({ labels: dropName(s.labels), value: -s.value }))),
          };
        return v;
      }
      case "binary": {
        const v = binary(e, this.at(e.lhs, t), this.at(e.rhs, t));
        return v.type === "vector" ? { type: "vector", samples: unique(v.samples) } : v;
      }
      case "aggregate": {
        const p = e.param ? this.at(e.param, t) : undefined;
        const param = p?.type === "scalar" || p?.type === "string" ? p.value : undefined;
        // Groups have distinct labels, and topk/bottomk keep their input's: no duplicate check needed.
        return { type: "vector", samples: aggregate(e, this.vector(e.expr, t), param) };
      }
      case "call":
        return callAt(this, e, t);
    }
  }

  vector(e: Expr, t: number): Sample[] {
    const v = this.at(e, t);
    return v.type === "vector" ? v.samples : [];
  }

  scalar(e: Expr, t: number): number {
    const v = this.at(e, t);
    return v.type === "scalar" ? v.value : NaN;
  }

  /** The selected series, in label order (as Prometheus's storage hands them out). */
  private select(e: SelectorExpr): readonly SeriesView[] {
    let views = this.views.get(e);
    if (!views) {
      views = [...this.source.select(e.matchers)].sort((a, b) => compareLabels(a.labels, b.labels));
      this.views.set(e, views);
    }
    return views;
  }

  /** True when the selector's series keep distinct label sets without `__name__` (checked once per query). */
  distinctWithoutName(e: SelectorExpr): boolean {
    let d = this.distinct.get(e);
    if (d === undefined) {
      const sigs = new Set(this.select(e).map((v) => signature(dropName(v.labels))));
      this.distinct.set(e, (d = sigs.size === this.select(e).length));
    }
    return d;
  }

  /** The instant lookback of a series: the default, or its window size when longer. */
  private lookback(view: SeriesView): number {
    return Math.max(this.lookbackMs, view.stepMs);
  }

  /**
   * The selected series' present samples over what the selector's evaluations reach: from its first
   * evaluation − offset − reach (inclusive) to its last − offset, the reach being a range selector's
   * range or the instant lookback.
   */
  columns(e: SelectorExpr, rangeMs?: number): readonly SampleColumns[] {
    let cols = this.columnsOf.get(e);
    if (!cols) {
      const [lo, hi] = this.spans.get(e) ?? [this.startMs, this.endMs];
      const to = hi - e.offsetMs;
      const from = lo - e.offsetMs;
      cols = this.select(e).map((v) => new SampleColumns(v, from - (rangeMs ?? this.lookback(v)) - 1, to));
      this.columnsOf.set(e, cols);
    }
    return cols;
  }

  /** Per series, the newest sample in [t − offset − lookback, t − offset] (the series' window size if longer). */
  private instant(e: SelectorExpr, t: number): Sample[] {
    const ref = this.evalTime(e.at, t) - e.offsetMs;
    const out: Sample[] = [];
    for (const c of this.columns(e)) {
      const j = c.seek(1, ref) - 1;
      if (j < 0 || (c.times[j] as number) < ref - this.lookback(c.view)) continue;
      const i = c.rows[j] as number;
      c.view.touch(i);
      out.push({ labels: c.view.sampleLabels(i), value: c.values[j] as number, t: c.times[j] as number });
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
        if (j < 0 || (times[j] as number) < at - lookback) continue;
        const i = rows[j] as number;
        c.view.touch(i);
        points.add(c.view.sampleLabels(i), ts, values[j] as number);
      }
      out.push(...points.series());
    }
    return out;
  }

  /** Each series' samples in [t − offset − range, t − offset], oldest first (Prometheus 2.42 closes both ends). */
  private matrix(e: RangeExpr, t: number): RangeSeries[] {
    const ref = this.evalTime(e.selector.at, t) - e.selector.offsetMs;
    const out: RangeSeries[] = [];
    for (const c of this.columns(e.selector, e.rangeMs)) {
      const lo = c.upperBound(ref - e.rangeMs - 1);
      const hi = c.upperBound(ref);
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

  /** The subquery's inner expression at each multiple of its step in [t − offset − range, t − offset]. */
  subquery(e: SubqueryExpr, t: number): RangeSeries[] {
    let cache = this.subqueries.get(e);
    if (!cache) this.subqueries.set(e, (cache = new Map()));
    return subqueryAt(this, e, t, cache);
  }
}
