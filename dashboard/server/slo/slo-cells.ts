/**
 * The panes one SLO reads (docs/slo.md, "Burn rates"): the newest pane of each window of its
 * policy, pane size and service (no route, no user), as counts — raw, and corrected by the pane's
 * nowcast with the half-width of its error-rate interval. Cells older than the longest tier window
 * roll into hourly totals kept for the SLO's period (the error budget). Pure and bounded.
 */
import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import type { SloDefinition } from "./slo-config.js";

export interface Counts {
  count: number;
  errors: number;
  /** Nowcast counts: the policy's value corrected by the bias measured at its stage and age. */
  corrCount: number;
  corrErrors: number;
  /** Σ corrCount × error-rate half-width, over the cells whose interval is known. */
  spreadWeight: number;
  /** corrCount of the cells with no nowcast or no interval: their correction is unknown. */
  unmeasured: number;
  /** Σ count × measured error-rate bias (pp), over cells with a measured bias. */
  biasWeight: number;
  biasCount: number;
}

export interface Cell extends Counts {
  readonly end: number;
  readonly seq: number;
  readonly kind: PaneKind;
  readonly emittedAt: number;
}

const HOUR = 3_600_000;

export function zero(): Counts {
  return {
    count: 0,
    errors: 0,
    corrCount: 0,
    corrErrors: 0,
    spreadWeight: 0,
    unmeasured: 0,
    biasWeight: 0,
    biasCount: 0,
  };
}

const FIELDS = [
  "count",
  "errors",
  "corrCount",
  "corrErrors",
  "spreadWeight",
  "unmeasured",
  "biasWeight",
  "biasCount",
] as const;

/** to += sign × c, field by field. */
export function add(to: Counts, c: Counts, sign = 1): void {
  for (const f of FIELDS) to[f] += sign * c[f];
}

/** A window's totals at one end, kept to slide to the next end in O(step) (see `sum`). */
interface Slide {
  t: number;
  counts: Counts;
  early: number;
}

/** A pane's counts: its nowcast when there is one, else its own value (correction unmeasured). */
export function cellOf(pane: Pane): Cell {
  const v = pane.value;
  const nc = pane.nowcast;
  const corrCount = nc ? nc.value.count : v.count;
  const hw = nc?.spread.errorRate ?? null;
  const pp = pane.bias.errorRatePp;
  return {
    end: pane.window.end,
    seq: pane.seq,
    kind: pane.kind,
    emittedAt: pane.emittedAt,
    count: v.count,
    errors: v.errors,
    corrCount,
    corrErrors: nc ? nc.value.count * nc.value.errorRate : v.errors,
    spreadWeight: hw === null ? 0 : corrCount * hw,
    unmeasured: hw === null ? corrCount : 0,
    biasWeight: pp === null ? 0 : v.count * pp,
    biasCount: pp === null ? 0 : v.count,
  };
}

export class SloCells {
  private readonly cells = new Map<number, Cell>();
  /** Hour start → totals of the cells rolled out of `cells`. */
  private readonly hours = new Map<number, Counts>();
  /** Span → the totals of its newest read: reads at ascending ends slide instead of summing again. */
  private readonly slides = new Map<number, Slide>();
  private newest = -Infinity;

  /** @param keepMs cells ending this long before the newest roll into the hourly totals */
  constructor(
    readonly slo: SloDefinition,
    private readonly keepMs: number,
  ) {}

  get newestEnd(): number {
    return this.newest;
  }

  covers(pane: Pane): boolean {
    const s = this.slo;
    return (
      pane.policy === s.policy &&
      pane.window.end - pane.window.start === s.paneMs &&
      pane.key.user === undefined &&
      pane.key.route === undefined &&
      pane.key.service === s.service
    );
  }

  /** Takes a covered pane; returns its window end when its cell changed. */
  apply(pane: Pane): number | undefined {
    const end = pane.window.end;
    if (end <= this.newest - this.keepMs) return undefined;
    const held = this.cells.get(end);
    if (held && held.seq >= pane.seq) return undefined;
    this.touch(end);
    if (pane.kind === "retract") this.cells.delete(end);
    else this.cells.set(end, cellOf(pane));
    if (end > this.newest) this.advance(end);
    return end;
  }

  cell(end: number): Cell | undefined {
    return this.cells.get(end);
  }

  /**
   * Totals of the cells of windows ending in (t − spanMs, t], and whether any of them is early.
   * Slides from the span's previous read when t is later and within a span of it (a changed cell
   * inside the previous read drops it: `touch`), else sums the cells.
   */
  sum(t: number, spanMs: number): { counts: Counts; early: boolean } {
    const step = this.slo.paneMs;
    const prev = this.slides.get(spanMs);
    let s: Slide;
    if (prev && prev.t <= t && t - prev.t < spanMs) {
      s = { t, counts: { ...prev.counts }, early: prev.early };
      for (let e = prev.t + step; e <= t; e += step) this.count(s, e, 1);
      for (let e = prev.t - spanMs + step; e <= t - spanMs; e += step) this.count(s, e, -1);
    } else {
      s = { t, counts: zero(), early: 0 };
      for (let e = t - spanMs + step; e <= t; e += step) this.count(s, e, 1);
    }
    this.slides.set(spanMs, s);
    return { counts: { ...s.counts }, early: s.early > 0 };
  }

  private count(s: Slide, e: number, sign: number): void {
    const c = this.cells.get(e);
    if (!c) return;
    add(s.counts, c, sign);
    if (c.kind === "early") s.early += sign;
  }

  /** The cell ending at e changes or goes: reads that hold it are dropped. */
  private touch(e: number): void {
    for (const [span, s] of this.slides) if (e <= s.t && e > s.t - span) this.slides.delete(span);
  }

  /** Totals over the SLO's period ending at t: the held cells and the hourly totals rolled out. */
  period(t: number): Counts {
    const out = this.sum(t, Math.min(this.slo.periodMs, this.keepMs)).counts;
    for (const [hour, c] of this.hours) if (hour + HOUR > t - this.slo.periodMs) add(out, c);
    return out;
  }

  private advance(end: number): void {
    this.newest = end;
    for (const [e, c] of this.cells) {
      if (e > end - this.keepMs) continue;
      this.touch(e);
      this.cells.delete(e);
      const hour = e - (e % HOUR);
      let h = this.hours.get(hour);
      if (!h) this.hours.set(hour, (h = zero()));
      add(h, c);
    }
    for (const hour of this.hours.keys()) if (hour + HOUR <= end - this.slo.periodMs) this.hours.delete(hour);
  }
}
