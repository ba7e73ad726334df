/**
 * Pipeline lag (docs/operations.md, "Metrics"): wall clock − log time as the core handles events,
 * i.e. how long after ingest stamped them. The pump observes it once per drained chunk, weighted
 * by the events in it, so the distribution is per event, not per chunk. Heartbeats are not
 * counted: the last partitions' punctuation waits in the merge for the next item of the ones
 * before it (docs/decisions/0012-batched-transport.md, "Punctuation"), and that wait delays no pane. Kept twice: cumulative
 * counts in the Prometheus buckets (`tidemark_engine_pipeline_lag_seconds`), and per second of
 * wall clock in fine buckets (5 % apart) for the last minute's p50 and p99 in `tm.status`.
 *
 * Pure: the wall clock is an argument.
 */

/** Upper bounds of the Prometheus buckets, seconds. */
export const LAG_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Seconds of wall clock the status percentiles cover. */
export const LAG_WINDOW_S = 60;

/** Fine buckets: 0 holds lags up to 1 ms, bucket i lags up to 1.05^i ms; the last everything above. */
const RATIO = 1.05;
const FINE = 1 + Math.ceil(Math.log(3_600_000) / Math.log(RATIO));

export interface LagPercentiles {
  /** Milliseconds (the upper bound of the fine bucket, within 5 %); null with no item in the window. */
  p50: number | null;
  p99: number | null;
}

export class PipelineLag {
  /** Items per Prometheus bucket (not cumulative); the last one is +Inf. */
  readonly counts = new Float64Array(LAG_BUCKETS_S.length + 1);
  sumSeconds = 0;
  count = 0;
  private readonly slots = Array.from({ length: LAG_WINDOW_S }, () => new Float64Array(FINE));
  /** The wall-clock second each slot holds. */
  private readonly slotSecond = new Float64Array(LAG_WINDOW_S).fill(-1);

  /** `items` handled at wall clock `nowMs` with log time `logTime`. */
  observe(nowMs: number, logTime: number, items: number): void {
    const lagMs = nowMs - logTime;
    const s = lagMs / 1000;
    let b = 0;
    while (b < LAG_BUCKETS_S.length && s > (LAG_BUCKETS_S[b] as number)) b++;
    this.counts[b] = (this.counts[b] as number) + items;
    this.sumSeconds += s * items;
    this.count += items;
    const slot = this.slot(nowMs);
    const f = lagMs <= 1 ? 0 : Math.min(FINE - 1, Math.ceil(Math.log(lagMs) / Math.log(RATIO)));
    slot[f] = (slot[f] as number) + items;
  }

  /** p50 and p99 of the items handled in the last LAG_WINDOW_S seconds before `nowMs`. */
  percentiles(nowMs: number): LagPercentiles {
    const second = Math.floor(nowMs / 1000);
    const total = new Float64Array(FINE);
    let n = 0;
    for (let i = 0; i < LAG_WINDOW_S; i++) {
      const at = this.slotSecond[i] as number;
      if (at < 0 || at <= second - LAG_WINDOW_S || at > second) continue;
      const slot = this.slots[i] as Float64Array;
      for (let f = 0; f < FINE; f++) {
        total[f] = (total[f] as number) + (slot[f] as number);
        n += slot[f] as number;
      }
    }
    if (n === 0) return { p50: null, p99: null };
    return { p50: rank(total, n * 0.5), p99: rank(total, n * 0.99) };
  }

  private slot(nowMs: number): Float64Array {
    const second = Math.floor(nowMs / 1000);
    const i = ((second % LAG_WINDOW_S) + LAG_WINDOW_S) % LAG_WINDOW_S;
    const slot = this.slots[i] as Float64Array;
    if (this.slotSecond[i] !== second) {
      slot.fill(0);
      this.slotSecond[i] = second;
    }
    return slot;
  }
}

/** The upper bound (ms, rounded to 0.1) of the fine bucket holding the item of rank `r`. */
function rank(total: Float64Array, r: number): number {
  let seen = 0;
  for (let f = 0; f < total.length; f++) {
    seen += total[f] as number;
    if (seen >= r) return f === 0 ? 1 : Math.round(10 * RATIO ** f) / 10;
  }
  return Math.round(10 * RATIO ** (total.length - 1)) / 10;
}
