/**
 * Events held back until their send time: a binary min-heap on `sendAt`. This is how the demo
 * makes events arrive late — the event's `ts` stays old while it waits here. Pure.
 */
export interface Delayed<T> {
  readonly sendAt: number;
  readonly item: T;
}

export class DelayQueue<T> {
  private readonly heap: Delayed<T>[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(sendAt: number, item: T): void {
    const heap = this.heap;
    heap.push({ sendAt, item });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Delayed<T>;
      const c = heap[i] as Delayed<T>;
      if (p.sendAt <= c.sendAt) break;
      heap[parent] = c;
      heap[i] = p;
      i = parent;
    }
  }

  /** Removes and returns every item with `sendAt <= now`, earliest first, at most `max`. */
  popDue(now: number, max = Number.POSITIVE_INFINITY): T[] {
    const out: T[] = [];
    while (out.length < max) {
      const top = this.heap[0];
      if (top === undefined || top.sendAt > now) break;
      out.push(top.item);
      this.removeTop();
    }
    return out;
  }

  private removeTop(): void {
    const heap = this.heap;
    const last = heap.pop() as Delayed<T>;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < heap.length && (heap[l] as Delayed<T>).sendAt < (heap[smallest] as Delayed<T>).sendAt) smallest = l;
      if (r < heap.length && (heap[r] as Delayed<T>).sendAt < (heap[smallest] as Delayed<T>).sendAt) smallest = r;
      if (smallest === i) return;
      const tmp = heap[i] as Delayed<T>;
      heap[i] = heap[smallest] as Delayed<T>;
      heap[smallest] = tmp;
      i = smallest;
    }
  }
}
