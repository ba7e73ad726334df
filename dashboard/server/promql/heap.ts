/**
 * topk and bottomk as Prometheus 2.42 picks them: Go's container/heap over the group's samples in
 * input order (a tie keeps the earlier sample), then sorted for output, NaN last
 * (promql/engine.go, aggregation()).
 */
import type { Sample } from "./values.js";

type Less = (a: Sample, b: Sample) => boolean;

/** vectorByValueHeap: a min-heap, NaN smallest. */
const byValue: Less = (a, b) => Number.isNaN(a.value) || a.value < b.value;
/** vectorByReverseValueHeap: a max-heap, NaN "largest". */
const byReverseValue: Less = (a, b) => Number.isNaN(a.value) || a.value > b.value;

export function topk(members: readonly Sample[], k: number): Sample[] {
  return select(members, k, byValue);
}

export function bottomk(members: readonly Sample[], k: number): Sample[] {
  return select(members, k, byReverseValue);
}

function select(members: readonly Sample[], k: number, less: Less): Sample[] {
  const h: Sample[] = [members[0] as Sample];
  for (let i = 1; i < members.length; i++) {
    const s = members[i] as Sample;
    const top = h[0] as Sample;
    if (h.length < k || less(top, s) || Number.isNaN(top.value)) {
      if (h.length === k) {
        if (k === 1) {
          h[0] = s;
          continue;
        }
        pop(h, less);
      }
      push(h, s, less);
    }
  }
  // sort.Reverse of the heap order: the largest (topk) or smallest (bottomk) first, NaN last.
  return h.sort((a, b) => (less(b, a) ? -1 : less(a, b) ? 1 : 0));
}

function push(h: Sample[], s: Sample, less: Less): void {
  h.push(s);
  let j = h.length - 1;
  for (;;) {
    const i = Math.trunc((j - 1) / 2);
    if (i === j || !less(h[j] as Sample, h[i] as Sample)) break;
    swap(h, i, j);
    j = i;
  }
}

function pop(h: Sample[], less: Less): void {
  const n = h.length - 1;
  swap(h, 0, n);
  let i = 0;
  for (;;) {
    const j1 = 2 * i + 1;
    if (j1 >= n) break;
    let j = j1;
    const j2 = j1 + 1;
    if (j2 < n && less(h[j2] as Sample, h[j1] as Sample)) j = j2;
    if (!less(h[j] as Sample, h[i] as Sample)) break;
    swap(h, i, j);
    i = j;
  }
  h.pop();
}

function swap(h: Sample[], i: number, j: number): void {
  const t = h[i] as Sample;
  h[i] = h[j] as Sample;
  h[j] = t;
}
