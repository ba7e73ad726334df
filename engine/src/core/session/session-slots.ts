/**
 * Session slots (docs/decisions/0034-sessions-at-scale.md): every open session of every
 * (service, user) key is one row of typed arrays, shared by the policies whose view of the key
 * holds exactly that session (bit p of `mask`; the hidden bias reference is a policy too). A row
 * holds the session's first and last event time, its events, whether one failed, which of its
 * policies have counted it as ended (`ended` ⊆ `mask`), the next row of the same key and the key,
 * and per timer clock the due it is armed at. No object per session: about 45 bytes a row, nothing
 * for the garbage collector to trace.
 *
 * Invariant: a row is live iff its mask is non-zero; a freed row is on the free list, which is
 * threaded through `next` (the most recently freed first).
 */
export const NO_SLOT = -1;

type Column = Float64Array | Int32Array | Uint32Array | Uint8Array;

/** A table's rows as they stood, copied (what a snapshot encodes after the input resumed). */
export interface CapturedTable {
  readonly top: number;
  readonly firstFree: number;
  readonly live: number;
  readonly columns: readonly Column[];
  /** Gives the copies' buffers back for the next capture (the snapshot is encoded). */
  release(): void;
}

/**
 * Buffers a table's columns are copied into at a snapshot's cut, kept for the next one: a copy of
 * tens of MB allocated anew at each checkpoint would cost a major collection in the pause. A capture
 * while an earlier one is still being encoded gets fresh buffers.
 */
export class CaptureBuffers {
  private spare: Column[] = [];
  private busy = false;

  /**
   * Copies of `columns[i].subarray(0, lengths[i])`; `release` when they are no longer read. `own`:
   * the kept buffers were used (false: fresh ones, an earlier capture still holds the kept ones).
   */
  copy(
    columns: readonly Column[],
    lengths: readonly number[],
  ): { columns: Column[]; own: boolean; release: () => void } {
    const own = !this.busy;
    const out = columns.map((c, i) => {
      const n = lengths[i] as number;
      let b = own ? this.spare[i] : undefined;
      if (b === undefined || b.length < n || b.constructor !== c.constructor) {
        b = new (c.constructor as new (n: number) => Column)(Math.ceil(n * GROWTH));
        if (own) this.spare[i] = b;
      }
      b.set(c.subarray(0, n));
      return b.subarray(0, n);
    });
    if (own) this.busy = true;
    return { columns: out, own, release: () => void (own && (this.busy = false)) };
  }
}

/** Growth of the row and key tables: small steps, so little of a large table is ever unused. */
export const GROWTH = 1.25;

/** A copy of `a` with room for `size` entries. */
export function grownTo<T extends Float64Array | Int32Array | Uint32Array | Uint8Array>(a: T, size: number): T {
  const next = new (a.constructor as new (n: number) => T)(size);
  next.set(a);
  return next;
}

export class SessionSlots {
  first = new Float64Array(0);
  last = new Float64Array(0);
  events = new Uint32Array(0);
  /** 1 when one of the session's events failed (status ≥ 500). */
  error = new Uint8Array(0);
  /** Policies holding the session. */
  mask = new Uint32Array(0);
  /** Policies that counted it as ended (their W passed its end); a subset of `mask`. */
  ended = new Uint32Array(0);
  /** Next row of the same key (NO_SLOT: the last). */
  next = new Int32Array(0);
  key = new Int32Array(0);
  /** Per timer clock: the due the row is armed at (Infinity: not armed). */
  readonly armed: Float64Array[];
  /** Rows [0, top) have been used. */
  top = 0;
  /** Live rows. */
  live = 0;
  /** First row of the free list (NO_SLOT: empty). */
  private freeHead = NO_SLOT;
  private readonly captures = new CaptureBuffers();

  constructor(
    readonly clocks: number,
    capacity = 1024,
  ) {
    this.armed = Array.from({ length: clocks }, () => new Float64Array(0));
    this.resize(capacity);
  }

  get capacity(): number {
    return this.first.length;
  }

  /** A fresh row (mask 0, not armed, no next): the caller fills it. */
  alloc(): number {
    this.live++;
    let s = this.freeHead;
    if (s !== NO_SLOT) this.freeHead = this.next[s] as number;
    else s = this.top++;
    if (s >= this.capacity) this.resize(Math.ceil(this.capacity * GROWTH));
    this.next[s] = NO_SLOT;
    this.ended[s] = 0;
    for (const a of this.armed) a[s] = Infinity;
    return s;
  }

  release(s: number): void {
    this.live--;
    this.mask[s] = 0;
    this.ended[s] = 0;
    for (const a of this.armed) a[s] = Infinity;
    this.next[s] = this.freeHead;
    this.freeHead = s;
  }

  /** Bytes of every backing array. */
  get bytes(): number {
    let n = 0;
    for (const a of this.columns()) n += a.byteLength;
    return n;
  }

  /** The row columns, in the snapshot's order. */
  columns(): (Float64Array | Uint32Array | Uint8Array | Int32Array)[] {
    return [this.first, this.last, this.events, this.error, this.mask, this.ended, this.next, this.key, ...this.armed];
  }

  /** Copies of the used rows of every column (a few memory copies: the snapshot's pause). */
  capture(): CapturedTable {
    const columns = this.columns();
    const { columns: copies, release } = this.captures.copy(
      columns,
      columns.map(() => this.top),
    );
    return { top: this.top, firstFree: this.freeHead, live: this.live, columns: copies, release };
  }

  /** The first free row (its list goes on through `next`), for the snapshot. */
  get firstFree(): number {
    return this.freeHead;
  }

  /** Restores the bookkeeping a snapshot wrote; the caller fills the columns after it. */
  restore(top: number, firstFree: number, live: number): void {
    if (top > this.capacity) this.resize(top);
    this.top = top;
    this.freeHead = firstFree;
    this.live = live;
  }

  private resize(size: number): void {
    this.first = grownTo(this.first, size);
    this.last = grownTo(this.last, size);
    this.events = grownTo(this.events, size);
    this.error = grownTo(this.error, size);
    this.mask = grownTo(this.mask, size);
    this.ended = grownTo(this.ended, size);
    this.next = grownTo(this.next, size);
    this.key = grownTo(this.key, size);
    for (let c = 0; c < this.armed.length; c++) {
      const a = grownTo(this.armed[c] as Float64Array, size);
      a.fill(Infinity, (this.armed[c] as Float64Array).length);
      this.armed[c] = a;
    }
  }
}
