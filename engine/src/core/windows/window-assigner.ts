/**
 * WindowAssigner: where in event time an event belongs (docs/semantics.md, "Windows"). A pure
 * function of `ts`. Tumbling windows are sliding windows whose slide equals their size; every
 * window is built from non-overlapping slices of gcd(size, slide), combined on emit.
 */
import type { WindowConfig } from "../types.js";

export interface WindowSpec {
  readonly sizeMs: number;
  readonly slideMs: number;
  /** gcd(size, slide): the unit of shared aggregation. */
  readonly sliceMs: number;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

export function windowSpec(w: WindowConfig): WindowSpec {
  const slideMs = w.kind === "sliding" ? w.slideMs : w.sizeMs;
  return { sizeMs: w.sizeMs, slideMs, sliceMs: gcd(w.sizeMs, slideMs) };
}

/** Start of the slice holding event time `ts`. */
export function sliceStartOf(spec: WindowSpec, ts: number): number {
  return Math.floor(ts / spec.sliceMs) * spec.sliceMs;
}

/** Start of the earliest window containing the slice starting at `sliceStart`. */
export function firstWindowStart(spec: WindowSpec, sliceStart: number): number {
  return Math.floor((sliceStart - spec.sizeMs) / spec.slideMs) * spec.slideMs + spec.slideMs;
}

/** Start of the latest window containing the slice starting at `sliceStart`. */
export function lastWindowStart(spec: WindowSpec, sliceStart: number): number {
  return Math.floor(sliceStart / spec.slideMs) * spec.slideMs;
}

/** Starts of every window containing the slice, earliest first (a hot path walks first…last itself). */
export function windowStartsOf(spec: WindowSpec, sliceStart: number): number[] {
  const out: number[] = [];
  const latest = lastWindowStart(spec, sliceStart);
  for (let s = firstWindowStart(spec, sliceStart); s <= latest; s += spec.slideMs) out.push(s);
  return out;
}
