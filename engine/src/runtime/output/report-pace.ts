/**
 * ReportPace: at most one report per period, for log lines that would otherwise repeat every turn
 * of a timer while a condition lasts (docs/decisions/0035-backpressure.md).
 *
 * Pure: the clock is an argument.
 */
export class ReportPace {
  private last = -Infinity;

  constructor(private readonly everyMs: number) {}

  /** True (and counted as reported) when the period has passed since the last report. */
  due(now: number): boolean {
    if (now - this.last < this.everyMs) return false;
    this.last = now;
    return true;
  }

  /** Forgets the last report: the next one is due at once. */
  reset(): void {
    this.last = -Infinity;
  }
}
