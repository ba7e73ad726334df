/**
 * Watermarks (docs/semantics.md, "Watermarks"). Log time is global (the runtime interleaves partitions
 * by ingest_ts); arrival-lag and perfect are logTime − lag. Event-time strategies (bounded,
 * percentile) are tracked per partition and combined with the minimum over partitions that are not
 * idle; a partition that has never spoken and is not idle holds them back. Idleness is a function
 * of the log (docs/decisions/0010-core-state-and-idleness.md): a partition is idle once its last
 * record is idleTimeout of log time old. Every W is monotone.
 */
import type { WatermarkStrategyConfig } from "../types.js";

export interface PartitionClock {
  /** Largest ingest_ts of the partition (records and heartbeats). */
  logTime: number;
  /** Largest event time of its records. */
  maxTs: number;
  /** Log time at its last record (heartbeats do not count); the first input's log time until then. */
  lastEventAt: number;
  /** It showed a record or a heartbeat. */
  spoken: boolean;
}

export function newPartitionClock(): PartitionClock {
  return { logTime: -Infinity, maxTs: -Infinity, lastEventAt: -Infinity, spoken: false };
}

/** No record for idleTimeout of log time: out of the event-time minimum until its next record. */
export function isIdle(p: PartitionClock, logTime: number, idleTimeoutMs: number): boolean {
  return logTime - p.lastEventAt >= idleTimeoutMs;
}

/** Recent delays (ingest_ts − ts) of one partition, for a percentile watermark. */
export class DelaySample {
  readonly ring: Float64Array;
  filled = 0;
  pos = 0;
  /** The q-quantile of the ring, refreshed every `refresh` pushes. */
  quantile = 0;
  sincePush = 0;
  private readonly refresh: number;

  constructor(
    readonly q: number,
    size: number,
  ) {
    this.ring = new Float64Array(size);
    this.refresh = Math.max(1, Math.ceil(size / 32));
  }

  push(delay: number): void {
    this.ring[this.pos] = delay;
    this.pos = (this.pos + 1) % this.ring.length;
    if (this.filled < this.ring.length) this.filled++;
    if (++this.sincePush >= this.refresh || this.filled <= this.refresh) this.recompute();
  }

  recompute(): void {
    this.sincePush = 0;
    this.quantile = select(this.ring.slice(0, this.filled), Math.floor(this.q * (this.filled - 1)));
  }
}

/** The k-th smallest value (0-based) of `a` (reordered in place): quickselect, O(n) expected. */
export function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i++] = a[j] as number;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k] ?? 0;
}

/** True for strategies tracked per partition on event time. */
export function isEventTime(s: WatermarkStrategyConfig): boolean {
  return s.kind === "bounded" || s.kind === "percentile";
}

/**
 * Candidate W of an event-time strategy at log time `logTime`: min over non-idle partitions; null
 * when held back (a non-idle partition never spoke) or when every partition is idle (W holds).
 */
export function eventTimeCandidate(
  s: WatermarkStrategyConfig,
  partitions: readonly PartitionClock[],
  samples: readonly DelaySample[] | null,
  logTime: number,
  idleTimeoutMs: number,
): number | null {
  let min = Infinity;
  for (let i = 0; i < partitions.length; i++) {
    const p = partitions[i] as PartitionClock;
    if (isIdle(p, logTime, idleTimeoutMs)) continue;
    if (!p.spoken) return null;
    const w =
      s.kind === "bounded"
        ? p.maxTs - s.lagMs
        : p.logTime - ((samples?.[i] as DelaySample).filled > 0 ? (samples?.[i] as DelaySample).quantile : 0);
    if (w < min) min = w;
  }
  return min === Infinity ? null : min;
}

/** "arrival-lag 2s"-style description of a strategy. */
export function describeStrategy(s: WatermarkStrategyConfig): string {
  if (s.kind === "percentile") return `percentile q=${s.q} of ${s.sample}`;
  return `${s.kind} ${s.lagMs}ms`;
}
