/**
 * A small sorted multiset of numbers kept in a plain array plus a separate size: the exact form
 * of a DDSketch holding few values. Plain arrays of doubles cost 8 bytes a slot (typed arrays
 * cost ~250 bytes of headers), and no wrapper object is needed. Capacity grows by GROWTH slots.
 */
const GROWTH = 4;

/** Index of the first of the `size` items ≥ value. */
export function lowerBound(items: number[], size: number, value: number): number {
  let lo = 0;
  let hi = size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Inserts `copies` of value in order; returns the array (a larger copy when it was full). */
export function insertSorted(items: number[] | null, size: number, value: number, copies: number): number[] {
  if (items === null || size + copies > items.length) {
    const next = new Array<number>(Math.ceil((size + copies) / GROWTH) * GROWTH);
    for (let i = 0; i < size; i++) next[i] = (items as number[])[i] as number;
    items = next;
  }
  let i = size;
  while (i > 0 && (items[i - 1] as number) > value) {
    items[i - 1 + copies] = items[i - 1] as number;
    i--;
  }
  for (let c = 0; c < copies; c++) items[i + c] = value;
  return items;
}

/** Number of copies of value among the `size` items. */
export function countOf(items: number[] | null, size: number, value: number): number {
  if (items === null) return 0;
  let n = 0;
  for (let i = lowerBound(items, size, value); i < size && items[i] === value; i++) n++;
  return n;
}

/** Removes `copies` of a value held at least that often (the caller checked). */
export function removeSorted(items: number[], size: number, value: number, copies: number): void {
  for (let i = lowerBound(items, size, value); i + copies < size; i++) items[i] = items[i + copies] as number;
}

/** True if every one of `other`'s items (with multiplicity) is among `items`. */
export function containsAll(items: number[] | null, size: number, other: number[], otherSize: number): boolean {
  let j = 0;
  for (let i = 0; i < otherSize; i++) {
    const v = other[i] as number;
    while (j < size && ((items as number[])[j] as number) < v) j++;
    if (j >= size || (items as number[])[j] !== v) return false;
    j++;
  }
  return true;
}

export function sumOf(items: number[] | null, size: number): number {
  let s = 0;
  for (let i = 0; i < size; i++) s += (items as number[])[i] as number;
  return s;
}
