/**
 * Queries evaluated at once: at most `max` run; up to `maxQueued` more wait, in order, until a slot
 * is free, their deadline passes or their client goes away; beyond that a query is refused at once
 * (docs/prometheus-api.md, "Query limits").
 */
import { QueryLimitError } from "../promql/index.js";

interface Waiter {
  grant(): void;
}

export class QuerySlots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly max: number,
    private readonly maxQueued: number,
    private readonly onChange: (running: number, queued: number) => void = () => {},
  ) {}

  /**
   * Resolves when the query holds a slot (give it back with release()). Rejects with a "queue" limit
   * when the queue is full, "timeout" after waitMs, "canceled" when `gone` resolves first.
   */
  async acquire(waitMs: number, gone: Promise<void>): Promise<void> {
    if (this.running < this.max) {
      this.running++;
      return this.changed();
    }
    if (this.waiting.length >= this.maxQueued)
      throw new QueryLimitError(
        "queue",
        `too many queries: ${this.max} running and ${this.maxQueued} waiting, the most allowed (queryMaxConcurrency, queryMaxQueued); retry later`,
      );
    let timer: NodeJS.Timeout | undefined;
    const waiter: Waiter = { grant: () => {} };
    try {
      await new Promise<void>((resolve, reject) => {
        waiter.grant = resolve;
        this.waiting.push(waiter);
        this.changed();
        timer = setTimeout(
          () => reject(new QueryLimitError("timeout", "query timed out waiting for a free query slot")),
          waitMs,
        );
        void gone.then(() =>
          reject(new QueryLimitError("canceled", "query canceled: the client closed the connection")),
        );
      });
    } catch (err) {
      const i = this.waiting.indexOf(waiter);
      if (i >= 0) this.waiting.splice(i, 1);
      else this.release(); // granted in the same turn as the rejection: hand the slot on
      this.changed();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Gives a slot back: to the first waiter, else free. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.running--;
    this.changed();
  }

  private changed(): void {
    this.onChange(this.running, this.waiting.length);
  }
}
