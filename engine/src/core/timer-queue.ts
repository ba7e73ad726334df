/**
 * Timers ordered by due time (log time, or watermark for event-time policies). The order is total
 * and derived from state only — (due, kind, policy, window size, window start) — so a queue rebuilt
 * from a snapshot pops in exactly the same order as the original.
 */
export const TimerKind = { Early: 0, LateFlush: 1, OnTime: 2, Final: 3, Reference: 4 } as const;
export type TimerKind = (typeof TimerKind)[keyof typeof TimerKind];

export interface Timer {
  due: number;
  kind: TimerKind;
  /** Policy index; -1 for the reference. */
  policy: number;
  /** Window-config index; -1 for early ticks. */
  wc: number;
  start: number;
}

function before(a: Timer, b: Timer): boolean {
  if (a.due !== b.due) return a.due < b.due;
  if (a.kind !== b.kind) return a.kind < b.kind;
  if (a.policy !== b.policy) return a.policy < b.policy;
  if (a.wc !== b.wc) return a.wc < b.wc;
  return a.start < b.start;
}

/** Binary min-heap of timers. */
export class TimerQueue {
  private readonly heap: Timer[] = [];

  get size(): number {
    return this.heap.length;
  }

  /** Due time of the earliest timer, +Infinity when empty. */
  peekDue(): number {
    return this.heap[0]?.due ?? Infinity;
  }

  push(t: Timer): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as Timer;
      if (!before(t, p)) break;
      h[i] = p;
      i = parent;
    }
    h[i] = t;
  }

  pop(): Timer | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && before(h[r] as Timer, h[l] as Timer) ? r : l;
      if (!before(h[c] as Timer, last)) break;
      h[i] = h[c] as Timer;
      i = c;
    }
    h[i] = last;
    return top;
  }

  clear(): void {
    this.heap.length = 0;
  }
}
