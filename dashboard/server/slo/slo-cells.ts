/**
 * The panes one SLO reads (docs/slo.md, "Burn rates"): the newest pane of each window of its
 * policy, pane size and service (no route, no user), as counts — raw, and corrected by the pane's
 * nowcast with the half-width of its error-rate interval (a latency SLO: latency-cell.ts). Settled
 * windows (final panes, or cells older than the longest tier window) go to the SLO's budget ledger
 * for its whole period (budget-ledger.ts). Pure and bounded.
 */
import type { Pane } from "@tidemark/engine/protocol";
import { BudgetLedger, HOUR_MS } from "./budget-ledger.js";
import { LatencyBias } from "./latency-bias.js";
import { latencyCellOf, missingThresholdText } from "./latency-cell.js";
import type { SloDefinition } from "./slo-config.js";

export { add, zero, type Cell, type Counts } from "./slo-counts.js";
import { add, zero, type Cell, type Counts } from "./slo-counts.js";

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
  /** Totals of the held cells not in the ledger yet. */
  private readonly unsettled = zero();
  /** Span → the totals of its newest read: reads at ascending ends slide instead of summing again. */
  private readonly slides = new Map<number, Slide>();
  private readonly latency: LatencyBias | undefined;
  private newest = -Infinity;
  /** Panes that carried no count for the SLO's latency threshold, and whether the newest did not. */
  private missing = { panes: 0, newest: false };

  /** @param keepMs cells ending this long before the newest settle into the ledger and go */
  constructor(
    readonly slo: SloDefinition,
    private readonly keepMs: number,
    readonly ledger: BudgetLedger = new BudgetLedger(slo),
  ) {
    this.latency = typeof slo.sli === "object" ? new LatencyBias() : undefined;
  }

  /** Why the SLO cannot be read, when it cannot: its panes lack its latency threshold. */
  get status(): string | null {
    return typeof this.slo.sli === "object" && this.missing.newest
      ? missingThresholdText(this.slo.sli.latencyAboveMs)
      : null;
  }

  get missingPanes(): number {
    return this.missing.panes;
  }

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
    const cell = pane.kind === "retract" ? undefined : this.cellOf(pane);
    if (cell === null) return undefined;
    this.touch(end);
    const settled = this.ledger.has(end);
    if (held && !settled) add(this.unsettled, held, -1);
    if (cell === undefined) this.cells.delete(end);
    else {
      this.cells.set(end, cell);
      if (pane.kind === "final" || pane.kind === this.slo.settledBy) this.ledger.settle(end, cell);
      else if (!settled) add(this.unsettled, cell);
    }
    if (end > this.newest) this.advance(end);
    return end;
  }

  /** The pane's cell by the SLO's SLI; null when the pane lacks the latency threshold (counted). */
  private cellOf(pane: Pane): Cell | null {
    if (typeof this.slo.sli !== "object") return cellOf(pane);
    const c = latencyCellOf(pane, this.slo.sli.latencyAboveMs, this.latency as LatencyBias, this.slo.settledBy);
    const newest = pane.window.end >= this.newest;
    if (c === undefined) {
      this.missing.panes++;
      if (newest) this.missing.newest = true;
      return null;
    }
    if (newest) this.missing.newest = false;
    return c;
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
    if (!Number.isFinite(t)) return { counts: zero(), early: false };
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

  /**
   * Totals over the SLO's period ending at t: the ledger's settled hours (whole hours, exact to the
   * hour) and the held cells not settled yet, less the held windows ending after t (a read at an
   * older t, a batch judged end by end).
   */
  period(t: number): Counts {
    const out = this.ledger.total(t);
    if (!Number.isFinite(t)) return out;
    add(out, this.unsettled);
    for (let e = t + this.slo.paneMs; e <= this.newest; e += this.slo.paneMs) {
      const c = this.cells.get(e);
      if (!c) continue;
      if (!this.ledger.has(e)) add(out, c, -1);
      else if (e - (e % HOUR_MS) <= t) add(out, c, -1);
    }
    return out;
  }

  /** The start of the oldest window counted (ledger or held), null when none. */
  countedFrom(): number | null {
    let end = this.ledger.firstEnd() ?? Infinity;
    for (const e of this.cells.keys()) if (e < end) end = e;
    return Number.isFinite(end) ? end - this.slo.paneMs : null;
  }

  private advance(end: number): void {
    this.newest = end;
    for (const [e, c] of this.cells) {
      if (e > end - this.keepMs) continue;
      this.touch(e);
      this.cells.delete(e);
      // A window its settling pane never came for settles as it goes.
      if (this.ledger.has(e)) continue;
      add(this.unsettled, c, -1);
      this.ledger.settle(e, c);
    }
    this.latency?.forgetBefore(end - this.keepMs);
  }
}
