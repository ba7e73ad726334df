/**
 * A binary min-heap of (due, id) pairs in typed arrays, ordered by due then id: the session
 * operator's timers (docs/decisions/0034-sessions-at-scale.md). No object per timer: a slot or key
 * timer is two numbers, so hundreds of thousands of pending sessions cost 12 bytes each here and
 * nothing to the garbage collector. Whether a popped entry still stands is the caller's question
 * (it keeps the due it armed per id and drops entries that no longer match).
 */
export class DueHeap {
  private due = new Float64Array(256);
  private id = new Int32Array(256);
  size = 0;

  /** Due of the earliest entry, +Infinity when empty. */
  peekDue(): number {
    return this.size === 0 ? Infinity : (this.due[0] as number);
  }

  /** Id of the earliest entry (undefined behaviour when empty). */
  peekId(): number {
    return this.id[0] as number;
  }

  push(due: number, id: number): void {
    if (this.size === this.due.length) this.grow();
    const d = this.due;
    const ids = this.id;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pd = d[parent] as number;
      if (pd < due || (pd === due && (ids[parent] as number) < id)) break;
      d[i] = pd;
      ids[i] = ids[parent] as number;
      i = parent;
    }
    d[i] = due;
    ids[i] = id;
  }

  /** Removes the earliest entry. */
  pop(): void {
    const n = --this.size;
    if (n <= 0) return;
    const d = this.due;
    const ids = this.id;
    const due = d[n] as number;
    const id = ids[n] as number;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      const r = c + 1;
      if (r < n) {
        const cd = d[c] as number;
        const rd = d[r] as number;
        if (rd < cd || (rd === cd && (ids[r] as number) < (ids[c] as number))) c = r;
      }
      const cd = d[c] as number;
      if (due < cd || (due === cd && id < (ids[c] as number))) break;
      d[i] = cd;
      ids[i] = ids[c] as number;
      i = c;
    }
    d[i] = due;
    ids[i] = id;
  }

  clear(): void {
    this.size = 0;
  }

  /** Bytes of the backing arrays. */
  get bytes(): number {
    return this.due.byteLength + this.id.byteLength;
  }

  private grow(): void {
    const due = new Float64Array(this.due.length * 2);
    due.set(this.due);
    const id = new Int32Array(this.id.length * 2);
    id.set(this.id);
    this.due = due;
    this.id = id;
  }
}
