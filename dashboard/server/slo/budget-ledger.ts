/**
 * An SLO's error budget over its whole period (docs/slo.md, "Error budget"): per hour of window
 * ends, the totals of the windows the SLO's policy settled (its final panes), with a bitmap of the
 * windows counted so a replayed final pane is not counted twice. Hours persist in JetStream
 * (budget-store.ts) and are restored before the panes are replayed. At most period / 1 h + 1 hours
 * per SLO are held (a counted bound): older ones are pruned as window ends advance. Pure.
 */
import { add, zero, type Counts } from "./slo-counts.js";
import type { SloDefinition } from "./slo-config.js";

export const HOUR_MS = 3_600_000;

export interface BudgetHour {
  readonly hour: number;
  readonly counts: Counts;
  /** Bit i: the window ending at hour + i × paneMs is counted. */
  readonly windows: Uint8Array;
}

export class BudgetLedger {
  private readonly hours = new Map<number, BudgetHour>();
  private readonly dirty = new Set<number>();
  private readonly gone: number[] = [];
  private newest = -Infinity;

  constructor(readonly slo: SloDefinition) {}

  /** The bound on held hours. */
  get maxHours(): number {
    return Math.ceil(this.slo.periodMs / HOUR_MS) + 1;
  }

  get size(): number {
    return this.hours.size;
  }

  /** The window ending at `end` is counted already. */
  has(end: number): boolean {
    const h = this.hours.get(hourOf(end));
    if (!h) return false;
    const i = this.index(end);
    return ((h.windows[i >> 3] as number) & (1 << (i & 7))) !== 0;
  }

  /** Counts a settled window once; false when it was counted or is older than the period. */
  settle(end: number, c: Counts): boolean {
    if (this.has(end) || end <= this.newest - this.slo.periodMs - HOUR_MS) return false;
    const hour = hourOf(end);
    let h = this.hours.get(hour);
    if (!h) this.hours.set(hour, (h = { hour, counts: zero(), windows: new Uint8Array(this.bitmapBytes()) }));
    const i = this.index(end);
    h.windows[i >> 3] = (h.windows[i >> 3] as number) | (1 << (i & 7));
    add(h.counts, c);
    this.dirty.add(hour);
    if (end > this.newest) this.prune(end);
    return true;
  }

  /** Takes an hour read back from the store (before any pane): false when outside the period kept. */
  restore(h: BudgetHour): boolean {
    if (h.windows.length !== this.bitmapBytes()) return false;
    this.hours.set(h.hour, { hour: h.hour, counts: { ...h.counts }, windows: Uint8Array.from(h.windows) });
    const last = h.hour + HOUR_MS;
    if (last > this.newest) this.prune(last);
    return this.hours.has(h.hour);
  }

  /** Totals of the hours holding window ends in (t − period, t], whole hours (exact to the hour). */
  total(t: number): Counts {
    const out = zero();
    for (const h of this.hours.values())
      if (h.hour + HOUR_MS > t - this.slo.periodMs && h.hour <= t) add(out, h.counts);
    return out;
  }

  /** Hours changed since the last call, and hours pruned (to delete from the store). */
  take(): { changed: BudgetHour[]; pruned: number[] } {
    const changed = [...this.dirty].flatMap((hour) => {
      const h = this.hours.get(hour);
      return h ? [h] : [];
    });
    this.dirty.clear();
    return { changed, pruned: this.gone.splice(0) };
  }

  /** The end of the oldest window counted, null when none. */
  firstEnd(): number | null {
    const first = this.hoursHeld()[0];
    if (!first) return null;
    const i = first.windows.findIndex((b) => b !== 0);
    if (i < 0) return null;
    const byte = first.windows[i] as number;
    const bit = Math.log2(byte & -byte);
    return first.hour + (8 * i + bit) * this.slo.paneMs;
  }

  hoursHeld(): BudgetHour[] {
    return [...this.hours.values()].sort((a, b) => a.hour - b.hour);
  }

  private prune(end: number): void {
    this.newest = end;
    for (const hour of this.hours.keys())
      if (hour + HOUR_MS <= end - this.slo.periodMs) {
        this.hours.delete(hour);
        this.dirty.delete(hour);
        this.gone.push(hour);
      }
  }

  private index(end: number): number {
    return Math.floor((end - hourOf(end)) / this.slo.paneMs);
  }

  private bitmapBytes(): number {
    return Math.ceil(HOUR_MS / this.slo.paneMs / 8);
  }
}

function hourOf(end: number): number {
  return end - (end % HOUR_MS);
}
