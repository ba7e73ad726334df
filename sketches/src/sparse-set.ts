/**
 * The sparse form of a HyperLogLog: a set of entries (25-bit index · 32 + rank, never 0) keyed
 * by index, keeping the highest rank. Kept in one array, no wrapper:
 * - a list while it holds at most LIST_MAX entries: a plain array (8 bytes a slot, no typed-array
 *   headers) scanned linearly, idle slots hold 0, growing by 2 slots, so 10 users take 10 slots;
 * - then an open-addressed hash table in a Uint32Array (entries are < 2^30; 4 bytes a slot): slot
 *   0 counts the entries, 2^k slots follow, load ≤ 3/4.
 */
export const LIST_MAX = 16;
export const RANK_BITS = 5;

/** A list (plain array, ≤ LIST_MAX slots) or a hash table (Uint32Array, more slots). */
export type SparseSet = number[] | Uint32Array;

/**
 * Adds an entry; returns the set (a new array when it grew), or null when a new entry would take
 * it past `limit` entries (the caller turns dense instead).
 */
export function sparseInsert(set: SparseSet | null, e: number, limit: number): SparseSet | null {
  if (set === null) set = [0, 0];
  return Array.isArray(set) ? listInsert(set, e, limit) : hashInsert(set, e, limit);
}

export function sparseSize(set: SparseSet | null): number {
  if (set === null) return 0;
  if (set.length > LIST_MAX) return set[0] as number;
  let n = 0;
  while (n < set.length && set[n] !== 0) n++;
  return n;
}

/** The entries, unordered. */
export function sparseEntries(set: SparseSet | null): number[] {
  if (set === null) return [];
  const out: number[] = [];
  for (let i = set.length > LIST_MAX ? 1 : 0; i < set.length; i++) {
    const e = set[i] as number;
    if (e !== 0) out.push(e);
  }
  return out;
}

function listInsert(list: number[], e: number, limit: number): SparseSet | null {
  const key = e >>> RANK_BITS;
  let i = 0;
  for (; i < list.length; i++) {
    const cur = list[i] as number;
    if (cur === 0) break;
    if (cur >>> RANK_BITS === key) {
      if (e > cur) list[i] = e;
      return list;
    }
  }
  if (i + 1 > limit) return null;
  if (i === list.length) {
    if (list.length === LIST_MAX) return hashInsert(rehash(list, 4 * LIST_MAX), e, limit);
    const next = new Array<number>(list.length + 2).fill(0);
    for (let j = 0; j < list.length; j++) next[j] = list[j] as number;
    list = next;
  }
  list[i] = e;
  return list;
}

/**
 * An empty hash table with the slots inserting `n` distinct entries one by one would have grown
 * it to (list, then 4·LIST_MAX slots, doubling past 3/4 full): a decoder fills it with
 * sparseFill and never rehashes.
 */
export function sparseTableFor(n: number): Uint32Array {
  let slots = 4 * LIST_MAX;
  while (n > slots * 0.75) slots *= 2;
  return new Uint32Array(slots + 1);
}

/** Adds an entry of a distinct index to a table from sparseTableFor (sized for it: no rehash). */
export function sparseFill(table: Uint32Array, e: number): void {
  hashInsert(table, e, Infinity);
}

function hashInsert(table: Uint32Array, e: number, limit: number): Uint32Array | null {
  const key = e >>> RANK_BITS;
  const mask = table.length - 2;
  for (let i = key & mask; ; i = (i + 1) & mask) {
    const cur = table[1 + i] as number;
    if (cur === 0) {
      const n = (table[0] as number) + 1;
      if (n > limit) return null;
      table[1 + i] = e;
      table[0] = n;
      return n > (table.length - 1) * 0.75 ? rehash(table, (table.length - 1) * 2) : table;
    }
    if (cur >>> RANK_BITS === key) {
      if (e > cur) table[1 + i] = e;
      return table;
    }
  }
}

function rehash(set: SparseSet, slots: number): Uint32Array {
  const table = new Uint32Array(slots + 1);
  for (let i = set.length > LIST_MAX ? 1 : 0; i < set.length; i++) {
    const e = set[i] as number;
    if (e !== 0) hashInsert(table, e, Infinity);
  }
  return table;
}
