/**
 * The ingest clock: ingestion time stamped on every event and heartbeat, monotonic per ingest
 * instance (`max(previous, now)`), so a wall-clock step backwards never makes log time run
 * backwards (docs/semantics.md, "Input contract").
 */
export class IngestClock {
  private last = -Infinity;
  constructor(private readonly wall: () => number = Date.now) {}

  /** The next ingest_ts: never smaller than any value returned before. */
  now(): number {
    const t = this.wall();
    if (t > this.last) this.last = t;
    return this.last;
  }

  /** An ingest_ts strictly greater than every value returned before (a punctuation's). */
  next(): number {
    const t = this.wall();
    this.last = t > this.last ? t : this.last + 1;
    return this.last;
  }
}
