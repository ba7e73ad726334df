/**
 * The accepted ledger of `tidemark load` (docs/operations.md, "`tidemark load`", "The accepted
 * ledger"): exactly the events ingest accepted, counted per service and tumbling window of event
 * time, with their errors (status ≥ 500). A test compares it with the engine's final panes. Pure.
 */
import { isError } from "@tidemark/engine/protocol";

export interface WindowCount {
  count: number;
  errors: number;
}

export interface LedgerJson {
  windowMs: number;
  /** service → window start (ms, as a string key) → counts. */
  services: Record<string, Record<string, WindowCount>>;
  total: number;
  errors: number;
  /** Smallest and largest accepted `ts`; null when nothing was accepted. */
  firstTs: number | null;
  lastTs: number | null;
  /**
   * False when ingest rejected or clamped records it did not name by index (more than 100
   * errors in one answer, or a clamped future `ts`): then the counts may be off by those.
   */
  exact: boolean;
}

export class AcceptedLedger {
  private readonly windows = new Map<string, Map<number, WindowCount>>();
  private total = 0;
  private errors = 0;
  private firstTs = Number.POSITIVE_INFINITY;
  private lastTs = Number.NEGATIVE_INFINITY;
  private exact = true;

  constructor(readonly windowMs: number) {
    if (!(Number.isInteger(windowMs) && windowMs > 0)) throw new RangeError(`windowMs must be ≥ 1, got ${windowMs}`);
  }

  /** The start of the tumbling window holding `ts`. */
  windowOf(ts: number): number {
    return Math.floor(ts / this.windowMs) * this.windowMs;
  }

  add(e: { ts: number; service: string; status: number }): void {
    let byWindow = this.windows.get(e.service);
    if (byWindow === undefined) this.windows.set(e.service, (byWindow = new Map()));
    const start = this.windowOf(e.ts);
    let w = byWindow.get(start);
    if (w === undefined) byWindow.set(start, (w = { count: 0, errors: 0 }));
    w.count++;
    this.total++;
    if (isError(e.status)) {
      w.errors++;
      this.errors++;
    }
    if (e.ts < this.firstTs) this.firstTs = e.ts;
    if (e.ts > this.lastTs) this.lastTs = e.ts;
  }

  markInexact(): void {
    this.exact = false;
  }

  get isExact(): boolean {
    return this.exact;
  }

  get count(): number {
    return this.total;
  }

  toJSON(): LedgerJson {
    const services: LedgerJson["services"] = {};
    for (const service of [...this.windows.keys()].sort()) {
      const byWindow = this.windows.get(service) as Map<number, WindowCount>;
      const out: Record<string, WindowCount> = {};
      for (const start of [...byWindow.keys()].sort((a, b) => a - b))
        out[String(start)] = { ...(byWindow.get(start) as WindowCount) };
      services[service] = out;
    }
    const any = this.total > 0;
    return {
      windowMs: this.windowMs,
      services,
      total: this.total,
      errors: this.errors,
      firstTs: any ? this.firstTs : null,
      lastTs: any ? this.lastTs : null,
      exact: this.exact,
    };
  }
}
