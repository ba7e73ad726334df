/**
 * A small sorted multiset of numbers in one plain array and nothing else: the exact form of a
 * DDSketch holding few values. Idle slots at the end hold NaN (values never are NaN), so the
 * array carries its own size and no wrapper object or size field is needed; plain arrays of
 * doubles cost 8 bytes a slot where typed arrays cost ~250 bytes of headers. Capacity grows by
 * 2 slots, so at most one slot idles after adds.
 */
const GROWTH = 2;

/** Number of values held. */
export function sizeOf(items: number[] | null): number {
  if (items === null) return 0;
  let n = items.length;
  while (n > 0 && Number.isNaN(items[n - 1])) n--;
  return n;
}

/** Index of the first of the `size` values ≥ value. */
function lowerBound(items: number[], size: number, value: number): number {
  let lo = 0;
  let hi = size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** An empty array with room for n values, the size insertSorted grows to for n (fill it in order). */
export function sortedOfSize(n: number): number[] {
  return new Array<number>(Math.ceil(n / GROWTH) * GROWTH).fill(NaN);
}

/** Inserts `copies` of value in order; returns the array (a larger copy when it was full). */
export function insertSorted(items: number[] | null, value: number, copies: number): number[] {
  const size = sizeOf(items);
  if (items === null || size + copies > items.length) {
    const next = sortedOfSize(size + copies);
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

/** Number of copies of value held. */
export function countOf(items: number[] | null, value: number): number {
  if (items === null) return 0;
  const size = sizeOf(items);
  let n = 0;
  for (let i = lowerBound(items, size, value); i < size && items[i] === value; i++) n++;
  return n;
}

/** Removes `copies` of a value held at least that often (the caller checked). */
export function removeSorted(items: number[], value: number, copies: number): void {
  const size = sizeOf(items);
  for (let i = lowerBound(items, size, value); i + copies < size; i++) items[i] = items[i + copies] as number;
  for (let i = size - copies; i < size; i++) items[i] = NaN;
}

/** True if every one of `other`'s values (with multiplicity) is held in `items`. */
export function containsAll(items: number[] | null, other: number[]): boolean {
  const size = sizeOf(items);
  const otherSize = sizeOf(other);
  let j = 0;
  for (let i = 0; i < otherSize; i++) {
    const v = other[i] as number;
    while (j < size && ((items as number[])[j] as number) < v) j++;
    if (j >= size || (items as number[])[j] !== v) return false;
    j++;
  }
  return true;
}

export function sumOf(items: number[] | null): number {
  const size = sizeOf(items);
  let s = 0;
  for (let i = 0; i < size; i++) s += (items as number[])[i] as number;
  return s;
}
