/**
 * A min-heap of user indices keyed by each user's next action time, in typed arrays: the whole
 * population (up to millions of users) without an object per user. Pure.
 */
export class TimeHeap {
  private readonly items: Int32Array;
  private size = 0;

  /** `at[i]` is the key of user i; change it only while i is out of the heap. */
  constructor(private readonly at: Float64Array) {
    this.items = new Int32Array(at.length);
  }

  get length(): number {
    return this.size;
  }

  /** Time of the earliest user, or +Infinity when empty. */
  peekTime(): number {
    return this.size === 0 ? Number.POSITIVE_INFINITY : (this.at[this.items[0] as number] as number);
  }

  push(user: number): void {
    const items = this.items;
    const at = this.at;
    const key = at[user] as number;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent] as number;
      if ((at[p] as number) <= key) break;
      items[i] = p;
      i = parent;
    }
    items[i] = user;
  }

  /** Removes and returns the earliest user; undefined when empty. */
  pop(): number | undefined {
    if (this.size === 0) return undefined;
    const items = this.items;
    const at = this.at;
    const top = items[0] as number;
    const last = items[--this.size] as number;
    const key = at[last] as number;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      let c = l;
      if (r < this.size && (at[items[r] as number] as number) < (at[items[l] as number] as number)) c = r;
      const child = items[c] as number;
      if ((at[child] as number) >= key) break;
      items[i] = child;
      i = c;
    }
    items[i] = last;
    return top;
  }
}
