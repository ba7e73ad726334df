import type { StoredPane } from "./pane-store.js";

export type QueueItem = { pane: StoredPane } | { frame: string; status?: true };

export interface QueueCounters {
  coalesced(): void;
  dropped(): void;
}

/**
 * The outbound queue of one client. A queued early pane is replaced by any newer pane of the
 * same id (coalesced), and at most `maxEarly` early panes wait; beyond that the oldest early
 * pane is dropped. On-time, late, final and retract panes are never coalesced or dropped, and
 * the panes of one id stay in seq order. Only the latest status frame waits.
 */
export class SendQueue {
  private items: Array<QueueItem | null> = [];
  private head = 0;
  /** Index of the queued early pane of each id, oldest first (Map insertion order). */
  private readonly early = new Map<string, number>();
  private statusAt = -1;
  private nonEarly = 0;
  private queuedBytes = 0;

  constructor(
    private readonly maxEarly: number,
    private readonly counters: QueueCounters,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /** Bytes of the queued frames and panes (a pane counts its JSON). */
  get bytes(): number {
    return this.queuedBytes;
  }

  /** Queued items that are neither early panes nor status frames. */
  get mustDeliver(): number {
    return this.nonEarly;
  }

  pushPane(stored: StoredPane): void {
    const id = stored.pane.id;
    const queued = this.early.get(id);
    if (queued !== undefined) {
      this.forget(this.items[queued]);
      this.items[queued] = null;
      this.early.delete(id);
      this.counters.coalesced();
    }
    if (stored.pane.kind === "early") {
      if (this.early.size >= this.maxEarly) this.dropOldestEarly();
      this.early.set(id, this.items.length);
    } else this.nonEarly++;
    this.queuedBytes += stored.json.length;
    this.items.push({ pane: stored });
  }

  pushFrame(frame: string): void {
    this.nonEarly++;
    this.queuedBytes += frame.length;
    this.items.push({ frame });
  }

  /** Queues a status frame, replacing a status frame still waiting. */
  pushStatus(frame: string): void {
    if (this.statusAt >= this.head && this.items[this.statusAt]) {
      this.forget(this.items[this.statusAt]);
      this.items[this.statusAt] = null;
    }
    this.statusAt = this.items.length;
    this.queuedBytes += frame.length;
    this.items.push({ frame, status: true });
  }

  /** Takes the next item: a run of up to `maxPanes` panes, or one frame. */
  take(maxPanes: number): StoredPane[] | string | undefined {
    this.skipHoles();
    const first = this.items[this.head];
    if (!first) return undefined;
    if ("frame" in first) {
      this.forget(first);
      this.items[this.head++] = null;
      if (!first.status) this.nonEarly--;
      this.compact();
      return first.frame;
    }
    const run: StoredPane[] = [];
    while (run.length < maxPanes && this.head < this.items.length) {
      const item = this.items[this.head];
      if (item && "frame" in item) break;
      if (item) {
        this.forget(item);
        run.push(item.pane);
        if (item.pane.pane.kind === "early") this.early.delete(item.pane.pane.id);
        else this.nonEarly--;
      }
      this.items[this.head++] = null;
    }
    this.compact();
    return run;
  }

  private dropOldestEarly(): void {
    const oldest = this.early.entries().next().value;
    if (!oldest) return;
    this.forget(this.items[oldest[1]]);
    this.items[oldest[1]] = null;
    this.early.delete(oldest[0]);
    this.counters.dropped();
  }

  private forget(item: QueueItem | null | undefined): void {
    if (item) this.queuedBytes -= "frame" in item ? item.frame.length : item.pane.json.length;
  }

  private skipHoles(): void {
    while (this.head < this.items.length && this.items[this.head] === null) this.head++;
  }

  /** Drops the consumed prefix once it is large, shifting the indexes kept for early panes. */
  private compact(): void {
    if (this.head < 1024 || this.head * 2 < this.items.length) return;
    const shift = this.head;
    this.items = this.items.slice(shift);
    this.head = 0;
    this.statusAt -= shift;
    for (const [id, at] of this.early) this.early.set(id, at - shift);
  }
}
