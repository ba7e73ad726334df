/**
 * Evaluates the subset against a Queryable at one time (instant query) or at each step of a range
 * (range query: every step is an instant evaluation, as in Prometheus). Selectors are resolved once
 * per query. Pure: the time comes in as an argument.
 */
import { DashboardError } from "../errors.js";
import { typeName, typeOf, type Expr, type RangeExpr, type SelectorExpr } from "./ast.js";
import { aggregate, topkParam } from "./aggregate.js";
import { binary } from "./binary.js";
import { compareLabels, dropName, signature } from "./labels.js";
import { upperBound, type Queryable, type SeriesView } from "./queryable.js";
import { overRange } from "./range-functions.js";
import type { RangeSeries, Sample, Value } from "./values.js";

/** Prometheus's default lookback (docs/decisions/0011-prometheus-api.md, "Lookback"). */
export const DEFAULT_LOOKBACK_MS = 5 * 60_000;

export interface EvalOptions {
  /** How far back an instant selector looks for a sample; a series' own window size if longer. */
  readonly lookbackMs?: number;
}

/** An instant query's value at `timeMs`: instant vectors sorted by labels (topk keeps its order). */
export function evaluateInstant(expr: Expr, source: Queryable, timeMs: number, opts: EvalOptions = {}): Value {
  const v = new Evaluation(source, opts).at(expr, timeMs);
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
  const ev = new Evaluation(source, opts);
  if (expr.type === "selector") return ev.selectorRange(expr, range).sort((a, b) => compareLabels(a.labels, b.labels));
  const bySig = new Map<string, RangeSeries>();
  for (let ts = range.startMs; ts <= range.endMs; ts += range.stepMs) {
    const v = ev.at(expr, ts);
    const samples = v.type === "scalar" ? [{ labels: {}, value: v.value }] : v.type === "vector" ? v.samples : [];
    for (const s of samples) {
      const sig = signature(s.labels);
      let series = bySig.get(sig);
      if (!series) bySig.set(sig, (series = { labels: s.labels, times: [], values: [] }));
      series.times.push(ts);
      series.values.push(s.value);
    }
  }
  return [...bySig.values()].sort((a, b) => compareLabels(a.labels, b.labels));
}

class Evaluation {
  private readonly views = new Map<SelectorExpr, readonly SeriesView[]>();
  private readonly lookbackMs: number;

  constructor(
    private readonly source: Queryable,
    opts: EvalOptions,
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

  /** Per series, the newest sample at or before t − offset within the lookback (the series' window size if longer). */
  private instant(e: SelectorExpr, t: number): Sample[] {
    const at = t - e.offsetMs;
    const out: Sample[] = [];
    for (const view of this.select(e)) {
      const from = at - Math.max(this.lookbackMs, view.stepMs);
      for (let i = upperBound(view, at) - 1; i >= 0 && view.time(i) > from; i--) {
        if (!view.present(i)) continue;
        view.touch(i);
        out.push({ labels: view.sampleLabels(i), value: view.value(i) });
        break;
      }
    }
    return out;
  }

  /**
   * A plain selector over a range query's steps, as instant() at each step gives it, walking each
   * series once with a cursor instead of searching it per step (docs/prometheus-api.md, "Sizing").
   */
  selectorRange(e: SelectorExpr, range: { startMs: number; endMs: number; stepMs: number }): RangeSeries[] {
    const out: RangeSeries[] = [];
    for (const view of this.select(e)) {
      const lookback = Math.max(this.lookbackMs, view.stepMs);
      const bySig = new Map<string, RangeSeries>();
      let next = upperBound(view, range.startMs - e.offsetMs);
      for (let ts = range.startMs; ts <= range.endMs; ts += range.stepMs) {
        const at = ts - e.offsetMs;
        while (next < view.length && view.time(next) <= at) next++;
        for (let i = next - 1; i >= 0 && view.time(i) > at - lookback; i--) {
          if (!view.present(i)) continue;
          view.touch(i);
          const labels = view.sampleLabels(i);
          const sig = signature(labels);
          let s = bySig.get(sig);
          if (!s) bySig.set(sig, (s = { labels, times: [], values: [] }));
          s.times.push(ts);
          s.values.push(view.value(i));
          break;
        }
      }
      out.push(...bySig.values());
    }
    return out;
  }

  /** Each series' samples in (t − offset − range, t − offset]. */
  private eachInRange(e: RangeExpr, t: number, fn: (view: SeriesView, i: number) => void): void {
    const at = t - e.selector.offsetMs;
    for (const view of this.select(e.selector)) {
      for (let i = upperBound(view, at) - 1; i >= 0 && view.time(i) > at - e.rangeMs; i--) {
        if (!view.present(i)) continue;
        view.touch(i);
        fn(view, i);
      }
    }
  }

  private matrix(e: RangeExpr, t: number): RangeSeries[] {
    const bySeries = new Map<SeriesView, RangeSeries>();
    this.eachInRange(e, t, (view, i) => {
      let s = bySeries.get(view);
      if (!s) bySeries.set(view, (s = { labels: view.labels, times: [], values: [] }));
      s.times.unshift(view.time(i));
      s.values.unshift(view.value(i));
    });
    return [...bySeries.values()];
  }

  private call(fn: Parameters<typeof overRange>[0], arg: RangeExpr, t: number): Sample[] {
    const at = t - arg.selector.offsetMs;
    const out: Sample[] = [];
    const values: number[] = [];
    for (const view of this.select(arg.selector)) {
      values.length = 0;
      for (let i = upperBound(view, at) - 1; i >= 0 && view.time(i) > at - arg.rangeMs; i--) {
        if (!view.present(i)) continue;
        view.touch(i);
        values.push(view.value(i));
      }
      const v = overRange(fn, view, values, arg.rangeMs, arg.text);
      if (v !== undefined) out.push({ labels: dropName(view.labels), value: v });
    }
    return out;
  }
}
