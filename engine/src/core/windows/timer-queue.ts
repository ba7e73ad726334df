/**
 * Timers ordered by due time (log time, or watermark for event-time policies). Each operator gives
 * its timers a total order derived from state only — for the window core (due, kind, policy, window
 * config, window start) — so a queue rebuilt from a snapshot pops in exactly the same order as the
 * original (docs/decisions/0004-policies-as-snapshots.md, decision 3).
 */

/** Kinds every operator has; operators add their own from 4 on (window-timer.ts, session/session-timer.ts). */
export const TimerKind = { Early: 0, LateFlush: 1, OnTime: 2, Final: 3 } as const;

/** What every timer carries: when it is due, its kind, the policy it acts for. */
export interface Timer {
  readonly due: number;
  readonly kind: number;
  readonly policy: number;
}

/** A policy's early tick: it acts on the policy, not on one window or session. */
export interface EarlyTimer extends Timer {
  readonly kind: typeof TimerKind.Early;
}

/** Orders the common part (due, kind, policy); 0 when equal, so an operator orders its targets next. */
export function compareTimers(a: Timer, b: Timer): number {
  if (a.due !== b.due) return a.due < b.due ? -1 : 1;
  if (a.kind !== b.kind) return a.kind - b.kind;
  return a.policy - b.policy;
}

/** Binary min-heap of timers under a strict total order `before`. */
export class TimerQueue<T extends Timer> {
  private readonly heap: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.heap.length;
  }

  /** Due time of the earliest timer, +Infinity when empty. */
  peekDue(): number {
    return this.heap[0]?.due ?? Infinity;
  }

  push(t: T): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as T;
      if (!this.before(t, p)) break;
      h[i] = p;
      i = parent;
    }
    h[i] = t;
  }

  pop(): T | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && this.before(h[r] as T, h[l] as T) ? r : l;
      if (!this.before(h[c] as T, last)) break;
      h[i] = h[c] as T;
      i = c;
    }
    h[i] = last;
    return top;
  }

  clear(): void {
    this.heap.length = 0;
  }
}
