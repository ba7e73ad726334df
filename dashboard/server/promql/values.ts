/** Values the engine computes (Prometheus's scalar, instant vector, range vector and string). */
import type { Labels } from "./labels.js";

export interface Sample {
  readonly labels: Labels;
  readonly value: number;
  /** The sample's own time (ms), set by instant selectors only: what timestamp() reads. */
  readonly t?: number;
}

/** A series of a range vector or of a range query's result: times (ms) and values, point by point. */
export interface RangeSeries {
  readonly labels: Labels;
  readonly times: number[];
  readonly values: number[];
}

export type Value =
  | { readonly type: "scalar"; readonly value: number }
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "vector"; readonly samples: Sample[] }
  | { readonly type: "matrix"; readonly series: RangeSeries[] };

/** A sample value as Prometheus writes it: shortest round-trip decimal, no exponent; NaN, +Inf, -Inf. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  if (Number.isInteger(v) && Math.abs(v) < 1e21) return `${v}`;
  const s = String(v);
  const e = s.indexOf("e");
  if (e < 0) return s;
  return expand(s.slice(0, e), Number(s.slice(e + 1)));
}

/** `1.5`, exponent 3 → `1500`; `1.5`, −7 → `0.00000015`. */
function expand(mantissa: string, exponent: number): string {
  const negative = mantissa.startsWith("-");
  const m = negative ? mantissa.slice(1) : mantissa;
  const dot = m.indexOf(".");
  const digits = m.replace(".", "");
  const point = (dot < 0 ? m.length : dot) + exponent;
  let out: string;
  if (point <= 0) out = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + "0".repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${out}` : out;
}
