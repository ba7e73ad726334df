/**
 * Functions over instant vectors, as Prometheus 2.42 computes them (promql/functions.go): math
 * element by element (dropping `__name__`), clamp, round, the date functions, sort, sort_desc.
 */
import { dropName } from "./labels.js";
import type { Sample } from "./values.js";

const MATH: Readonly<Record<string, (v: number) => number>> = {
  abs: Math.abs,
  ceil: Math.ceil,
  floor: Math.floor,
  exp: Math.exp,
  sqrt: Math.sqrt,
  ln: Math.log,
  log2: Math.log2,
  log10: Math.log10,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  sinh: Math.sinh,
  cosh: Math.cosh,
  tanh: Math.tanh,
  asinh: Math.asinh,
  acosh: Math.acosh,
  atanh: Math.atanh,
  deg: (v) => (v * 180) / Math.PI,
  rad: (v) => (v * Math.PI) / 180,
  sgn: (v) => (v < 0 ? -1 : v > 0 ? 1 : v),
};

/** Go's time.Time fields of a unix second, UTC. */
const DATE: Readonly<Record<string, (d: Date) => number>> = {
  day_of_month: (d) => d.getUTCDate(),
  day_of_week: (d) => d.getUTCDay(),
  day_of_year: (d) => Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1,
  days_in_month: (d) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate(),
  hour: (d) => d.getUTCHours(),
  minute: (d) => d.getUTCMinutes(),
  month: (d) => d.getUTCMonth() + 1,
  year: (d) => d.getUTCFullYear(),
};

export function isMathFunction(fn: string): boolean {
  return fn in MATH;
}

export function isDateFunction(fn: string): boolean {
  return fn in DATE;
}

/** f applied to each sample, `__name__` dropped (simpleFunc). */
export function mapValues(samples: readonly Sample[], f: (v: number) => number): Sample[] {
  return samples.map((s) => ({ labels: dropName(s.labels), value: f(s.value) }));
}

export function mathFunction(fn: string, samples: readonly Sample[]): Sample[] {
  return mapValues(samples, MATH[fn] as (v: number) => number);
}

/** A date function of each sample's value (a unix time, truncated to the second), or of the step's time. */
export function dateFunction(fn: string, samples: readonly Sample[] | undefined, stepMs: number): Sample[] {
  const f = DATE[fn] as (d: Date) => number;
  const at = (seconds: number): number => f(new Date(Math.trunc(seconds) * 1000));
  if (samples === undefined) return [{ labels: {}, value: at(Math.floor(stepMs / 1000)) }];
  return mapValues(samples, at);
}

export function clamp(samples: readonly Sample[], min: number, max: number): Sample[] {
  if (max < min) return [];
  return mapValues(samples, (v) => goMax(min, goMin(max, v)));
}

/** Rounds to the nearest multiple of toNearest, ties up, as Prometheus (through the inverse). */
export function round(samples: readonly Sample[], toNearest: number): Sample[] {
  const inverse = 1 / toNearest;
  return mapValues(samples, (v) => Math.floor(v * inverse + 0.5) / inverse);
}

/** Go's math.Max/Min: NaN wins. */
export function goMax(a: number, b: number): number {
  return Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b);
}

export function goMin(a: number, b: number): number {
  return Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b);
}

/** sort (ascending) or sort_desc, NaN last either way; the labels stay (`__name__` too). */
export function sortByValue(samples: readonly Sample[], descending: boolean): Sample[] {
  return [...samples].sort((a, b) => {
    const an = Number.isNaN(a.value);
    const bn = Number.isNaN(b.value);
    if (an || bn) return an === bn ? 0 : an ? 1 : -1;
    return descending ? b.value - a.value : a.value - b.value;
  });
}
