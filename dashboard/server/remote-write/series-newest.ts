/**
 * The newest sample written per series, so that no series is ever sent a sample older than one it
 * holds (a remote-write receiver refuses the whole request: docs/remote-write.md, "Order per
 * series"). Kept across restarts by the role (a snapshot written after each accepted request,
 * before the panes are acknowledged), bounded by a count: past it the series with the oldest
 * newest sample are forgotten, counted.
 */

/** What to do with a sample, against the newest one taken for its series. */
export type Admission = "new" | "resent" | "out-of-order" | "revised";

export interface NewestEntry {
  readonly ts: number;
  readonly value: number;
  /** Stream sequence of the TM_PANES message the sample came from. */
  readonly seq: number;
}

/**
 * A sample (ts, value) of message `seq` against the newest taken for its series: newer is `new`;
 * else, from that message or an earlier one, it was written before (or refused) and is `resent`;
 * from a later message, `revised` (same time, another value) or `out-of-order` (older). Samples of
 * one message are taken in time order, so a later message with an older time is really late.
 */
export function admitAgainst(last: NewestEntry | undefined, ts: number, value: number, seq: number): Admission {
  if (last === undefined || ts > last.ts) return "new";
  if (seq <= last.seq || (ts === last.ts && Object.is(value, last.value))) return "resent";
  return ts === last.ts ? "revised" : "out-of-order";
}

export class SeriesNewest {
  private readonly entries = new Map<string, NewestEntry>();
  private forgottenTotal = 0;

  constructor(private readonly maxSeries: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Series forgotten past the bound, in all. */
  get forgotten(): number {
    return this.forgottenTotal;
  }

  /** Against the series' newest accepted sample (`admitAgainst`). */
  admit(series: string, ts: number, value: number, seq: number): Admission {
    return admitAgainst(this.entries.get(series), ts, value, seq);
  }

  /** Records a sample as the series' newest (only ever newer: callers admit first). */
  record(series: string, ts: number, value: number, seq: number): void {
    const e = this.entries.get(series);
    if (e !== undefined && e.ts >= ts) return;
    this.entries.delete(series);
    this.entries.set(series, { ts, value, seq });
    if (this.entries.size > this.maxSeries) this.evict();
  }

  newest(series: string): NewestEntry | undefined {
    return this.entries.get(series);
  }

  toJSON(): { series: [string, number, number, number][] } {
    return { series: [...this.entries].map(([k, e]) => [k, e.ts, e.value, e.seq]) };
  }

  /** Restores a snapshot written by `toJSON` (malformed rows are skipped). */
  static from(json: unknown, maxSeries: number): SeriesNewest {
    const out = new SeriesNewest(maxSeries);
    const rows = (json as { series?: unknown } | null)?.series;
    if (!Array.isArray(rows)) return out;
    for (const row of rows) {
      if (!Array.isArray(row) || typeof row[0] !== "string" || typeof row[1] !== "number") continue;
      out.record(row[0], row[1], typeof row[2] === "number" ? row[2] : NaN, typeof row[3] === "number" ? row[3] : 0);
    }
    return out;
  }

  /** Forgets a tenth of the bound: the series whose newest sample is oldest. */
  private evict(): void {
    const drop = Math.max(1, Math.floor(this.maxSeries / 10));
    const oldest = [...this.entries].sort((a, b) => a[1].ts - b[1].ts).slice(0, drop);
    for (const [k] of oldest) this.entries.delete(k);
    this.forgottenTotal += oldest.length;
  }
}
