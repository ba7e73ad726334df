/**
 * Batches waiting for a sender, first in first out, with a cap on the events they hold: when
 * ingest cannot keep up, a batch that would pass the cap is shed (dropped and counted), so the
 * generator never queues without bound (docs/operations.md, "`tidemark load`", "Shedding"). Pure.
 */
export class Outbox<B extends { readonly events: { readonly length: number } }> {
  private readonly batches: B[] = [];
  private events = 0;
  private shed = 0;

  constructor(readonly maxEvents: number) {}

  /** Queues `b`, or sheds it when it would take the queue past the cap (false). */
  offer(b: B): boolean {
    if (this.events > 0 && this.events + b.events.length > this.maxEvents) {
      this.shed += b.events.length;
      return false;
    }
    this.batches.push(b);
    this.events += b.events.length;
    return true;
  }

  take(): B | undefined {
    const b = this.batches.shift();
    if (b !== undefined) this.events -= b.events.length;
    return b;
  }

  /** Removes every batch still queued (the run gave up on them). */
  drain(): B[] {
    const all = this.batches.splice(0);
    this.events = 0;
    return all;
  }

  get queuedEvents(): number {
    return this.events;
  }

  get shedEvents(): number {
    return this.shed;
  }
}
