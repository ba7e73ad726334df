/**
 * A calendar queue of (due, id) pairs, popped in (due, id) order: the session operator's timers
 * (docs/decisions/0034-sessions-at-scale.md, docs/decisions/0053-session-timer-calendar.md).
 *
 * Invariant: every entry whose bucket (⌊due / width⌋) is at or before `cursor` is in `near`, a
 * DueHeap; every other entry is appended, unsorted, to its bucket's list in `far`. So the earliest
 * entry is near's earliest while near holds any; once near is empty, the earliest bucket of `far`
 * is heaped into it and becomes the cursor.
 *
 * Why not one heap: rows are armed roughly in the order they fire (their dues follow the log), and
 * hundreds of thousands may be pending at once. One heap that large pops with a cache miss per
 * level; here an entry is appended once, heaped once among its bucket's few thousand, and popped
 * there. No object per entry: the lists are typed arrays, reused once drained.
 */
import { DueHeap } from "./due-heap.js";

/** Width of a bucket, in the clock's milliseconds. */
export const BUCKET_MS = 256;

/** Bucket numbers count from the first entry's (as small integers: no boxed number as a Map key). */
function bucketOf(due: number, origin: number): number {
  return Math.floor(due / BUCKET_MS) - origin;
}

class Bucket {
  due = new Float64Array(64);
  id = new Int32Array(64);
  size = 0;

  push(due: number, id: number): void {
    if (this.size === this.due.length) {
      const d = new Float64Array(this.size * 2);
      d.set(this.due);
      const i = new Int32Array(this.size * 2);
      i.set(this.id);
      this.due = d;
      this.id = i;
    }
    this.due[this.size] = due;
    this.id[this.size++] = id;
  }
}

export class DueCalendar {
  private readonly near = new DueHeap();
  private cursor = -Infinity;
  private readonly far = new Map<number, Bucket>();
  /** The buckets of `far` by number: a min-heap of their numbers. */
  private readonly order: number[] = [];
  /** Drained buckets, kept for reuse (at most a few). */
  private readonly spare: Bucket[] = [];
  private farSize = 0;
  /** ⌊due / BUCKET_MS⌋ of the first finite due pushed (NaN before): bucket numbers are relative to it. */
  private origin = NaN;
  /** The bucket pushed to last (pushes come in runs of one bucket), and its number. */
  private lastNo = NaN;
  private last: Bucket | undefined;

  get size(): number {
    return this.near.size + this.farSize;
  }

  /** Due of the earliest entry, +Infinity when empty. */
  peekDue(): number {
    if (this.near.size === 0 && !this.refill()) return Infinity;
    return this.near.peekDue();
  }

  /** Id of the earliest entry (call after peekDue; undefined behaviour when empty). */
  peekId(): number {
    return this.near.peekId();
  }

  push(due: number, id: number): void {
    if (this.origin !== this.origin) this.origin = Number.isFinite(due) ? Math.floor(due / BUCKET_MS) : 0;
    const b = bucketOf(due, this.origin);
    if (b <= this.cursor) return this.near.push(due, id);
    let bucket = b === this.lastNo ? this.last : this.far.get(b);
    if (bucket === undefined) {
      bucket = this.spare.pop() ?? new Bucket();
      this.far.set(b, bucket);
      pushNumber(this.order, b);
    }
    this.lastNo = b;
    this.last = bucket;
    bucket.push(due, id);
    this.farSize++;
  }

  /** Removes the earliest entry (call after peekDue). */
  pop(): void {
    this.near.pop();
  }

  clear(): void {
    this.near.clear();
    this.cursor = -Infinity;
    this.far.clear();
    this.order.length = 0;
    this.farSize = 0;
    this.lastNo = NaN;
    this.last = undefined;
  }

  /** Bytes of the backing arrays. */
  get bytes(): number {
    let n = this.near.bytes;
    for (const b of this.far.values()) n += b.due.byteLength + b.id.byteLength;
    return n;
  }

  /** Moves the earliest bucket of `far` into the empty `near`; false when there is none. */
  private refill(): boolean {
    if (this.order.length === 0) return false;
    const b = popNumber(this.order);
    const bucket = this.far.get(b) as Bucket;
    this.far.delete(b);
    this.lastNo = NaN;
    this.last = undefined;
    this.cursor = b;
    const { due, id, size } = bucket;
    for (let i = 0; i < size; i++) this.near.push(due[i] as number, id[i] as number);
    this.farSize -= size;
    bucket.size = 0;
    if (this.spare.length < 4) this.spare.push(bucket);
    return true;
  }
}

function pushNumber(heap: number[], v: number): void {
  let i = heap.length;
  heap.push(v);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const p = heap[parent] as number;
    if (p <= v) break;
    heap[i] = p;
    i = parent;
  }
  heap[i] = v;
}

function popNumber(heap: number[]): number {
  const top = heap[0] as number;
  const last = heap.pop() as number;
  const n = heap.length;
  if (n === 0) return top;
  let i = 0;
  for (;;) {
    let c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && (heap[c + 1] as number) < (heap[c] as number)) c++;
    if (last <= (heap[c] as number)) break;
    heap[i] = heap[c] as number;
    i = c;
  }
  heap[i] = last;
  return top;
}
