/**
 * A bucketed timer list (docs/decisions/0020-session-speed.md, decision 2): the session operator's
 * timers of one driver queue, under the same strict total order as the driver's heap. Timers are
 * appended unsorted to the bucket of their due (`bucketMs` of log time or watermark each); the
 * earliest bucket is sorted once when it becomes the head and is then consumed in order. A timer
 * armed into or before the head's bucket is inserted in order. Against one heap entry per timer
 * (a pop walks ~17 levels of a 100k-entry heap, a cache miss each), appending is sequential and a
 * head bucket is sorted in cache.
 *
 * A bucket about to become the head is first settled (`settle`, docs/decisions/0026-session-flat.md):
 * a timer the owner knows would only re-arm itself later when it fires gets its later due now and
 * moves on (or is dropped when it would do nothing), so it is neither sorted nor fired.
 */
import type { Timer } from "../timer-queue.js";

export class TimerWheel<T extends Timer> {
  /** Future buckets: bucket index → its timers, unsorted. */
  private readonly buckets = new Map<number, T[]>();
  /** Min-heap of the indexes in `buckets` (one entry per bucket: a few hundred). */
  private readonly order: number[] = [];
  /** The head run, sorted: every pending timer of buckets ≤ headBucket, from `next` on. */
  private head: T[] = [];
  private next = 0;
  private headBucket = -Infinity;
  private count = 0;
  /** Bucket of the first timer ever pushed: indexes are relative to it (small integers, cheap Map keys). */
  private origin = NaN;

  constructor(
    private readonly bucketMs: number,
    /** Strict total order: negative iff a is before b, 0 only for equal keys. */
    private readonly compare: (a: T, b: T) => number,
    /**
     * Called for each timer of a bucket about to become the head: false drops it (it would fire
     * nothing); true keeps it, at its due then, which may have moved later (never earlier).
     */
    private readonly settle: (t: T) => boolean = () => true,
  ) {}

  get size(): number {
    return this.count;
  }

  push(t: T): void {
    this.count++;
    const abs = Math.floor(t.due / this.bucketMs);
    // A due of −Infinity (a restored late flush that never ran) is before everything: the head run.
    if (abs === -Infinity) return this.insertHead(t);
    if (Number.isNaN(this.origin)) this.origin = abs;
    const b = abs - this.origin;
    if (b <= this.headBucket) return this.insertHead(t);
    this.later(b, t);
  }

  /** The earliest timer, or undefined when empty. */
  peek(): T | undefined {
    if (this.next === this.head.length && !this.advance()) return undefined;
    return this.head[this.next];
  }

  /** Removes and returns the earliest timer. */
  pop(): T | undefined {
    const t = this.peek();
    if (t === undefined) return undefined;
    this.count--;
    this.head[this.next++] = undefined as unknown as T;
    return t;
  }

  /** Makes the earliest bucket that keeps a timer once settled the head run (the old head is used up). */
  private advance(): boolean {
    this.head.length = 0;
    this.next = 0;
    while (this.order.length > 0) {
      const b = this.popOrder();
      const list = this.buckets.get(b) as T[];
      this.buckets.delete(b);
      const kept = this.settled(list, b);
      if (kept === 0) continue;
      list.sort(this.compare);
      this.head = list;
      this.headBucket = b;
      return true;
    }
    this.headBucket = -Infinity;
    return false;
  }

  /** Settles bucket b's timers: the kept ones still in b stay in `list` (compacted), later ones move on. */
  private settled(list: T[], b: number): number {
    let kept = 0;
    for (let i = 0; i < list.length; i++) {
      const t = list[i] as T;
      if (!this.settle(t)) {
        this.count--;
        continue;
      }
      const moved = Math.floor(t.due / this.bucketMs) - this.origin;
      if (moved <= b) list[kept++] = t;
      else this.later(moved, t);
    }
    list.length = kept;
    return kept;
  }

  private later(b: number, t: T): void {
    let list = this.buckets.get(b);
    if (list === undefined) {
      this.buckets.set(b, (list = []));
      this.pushOrder(b);
    }
    list.push(t);
  }

  /** Binary search for the first pending head timer not before t; t goes there. */
  private insertHead(t: T): void {
    const h = this.head;
    let lo = this.next;
    let hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.compare(h[mid] as T, t) < 0) lo = mid + 1;
      else hi = mid;
    }
    h.splice(lo, 0, t);
  }

  private pushOrder(b: number): void {
    const h = this.order;
    let i = h.length;
    h.push(b);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((h[parent] as number) <= b) break;
      h[i] = h[parent] as number;
      i = parent;
    }
    h[i] = b;
  }

  private popOrder(): number {
    const h = this.order;
    const top = h[0] as number;
    const last = h.pop() as number;
    if (h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && (h[r] as number) < (h[l] as number) ? r : l;
      if ((h[c] as number) >= last) break;
      h[i] = h[c] as number;
      i = c;
    }
    h[i] = last;
    return top;
  }
}
