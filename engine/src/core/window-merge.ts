/**
 * A window of several slices reads its keys merged (docs/decisions/0022-sliced-windows.md): the
 * merge is kept until one of its slices takes an event, so every policy's panes at one tick share
 * one merge, and the merge of all slices but the last is kept apart, so a tick after events in the
 * newest slice only (the common case) copies it and merges that slice, not all of them. Merges of
 * counts, DDSketch bins and HyperLogLog registers are exact: the values equal one aggregate's.
 */
import { addsOf, type KeyNode, type Slice, type Window } from "./window-state.js";

/** The window's keys merged over its slices, in first-seen order (slice order, then key order). */
export function mergedKeys(w: Window): Map<string, KeyNode> {
  const adds = addsOf(w);
  if (w.merged !== null && w.mergedAdds === adds) return w.merged;
  const last = w.slices.length - 1;
  const lastSlice = w.slices[last] as Slice;
  let out = copyKeys(prefixOf(w, last));
  mergeInto(out, lastSlice, groupOf(w, lastSlice));
  if (groupsSpan(w)) out = sortKeys(out);
  w.merged = out;
  w.mergedAdds = adds;
  return out;
}

/** Drops the window's merges (its panes are done, or it is freed). */
export function dropMerges(w: Window): void {
  w.merged = null;
  w.mergedAdds = -1;
  w.prefix = null;
  w.prefixSlices = [];
  w.prefixAdds = [];
}

/** The merge of slices [0, n): the kept one, extended if only slices after it are new, else rebuilt. */
function prefixOf(w: Window, n: number): Map<string, MergedNode> {
  let keep = w.prefix === null ? 0 : w.prefixSlices.length;
  if (keep > n) keep = 0;
  for (let i = 0; i < keep; i++) {
    const s = w.slices[i] as Slice;
    if (s !== w.prefixSlices[i] || s.adds !== w.prefixAdds[i]) keep = 0;
  }
  const prefix =
    keep === 0 || w.prefix === null ? new Map<string, MergedNode>() : (w.prefix as Map<string, MergedNode>);
  if (keep === 0) {
    w.prefixSlices = [];
    w.prefixAdds = [];
  }
  for (let i = keep; i < n; i++) {
    const s = w.slices[i] as Slice;
    mergeInto(prefix, s, groupOf(w, s));
    w.prefixSlices.push(s);
    w.prefixAdds.push(s.adds);
  }
  w.prefix = prefix;
  return prefix;
}

/** A merged key: `group` is the window's own slice where it was first seen, `seen` its first record there. */
interface MergedNode extends KeyNode {
  group: number;
  routes: Map<string, MergedNode> | null;
}

function copyKeys(keys: ReadonlyMap<string, MergedNode>): Map<string, MergedNode> {
  const out = new Map<string, MergedNode>();
  for (const [service, node] of keys) {
    const routes = new Map<string, MergedNode>();
    for (const [route, r] of node.routes ?? []) routes.set(route, copyNode(r, null));
    out.set(service, copyNode(node, routes));
  }
  return out;
}

function copyNode(node: MergedNode, routes: Map<string, MergedNode> | null): MergedNode {
  return { agg: node.agg.clone(), routes, tracks: null, seen: node.seen, group: node.group };
}

/** Merges a slice's keys into `out` (new keys appended, as copies); `group` is the own slice it is in. */
function mergeInto(out: Map<string, MergedNode>, slice: Slice, group: number): void {
  for (const [service, node] of slice.services) {
    const m = mergeNode(out, service, node, group, true);
    for (const [route, r] of node.routes ?? []) mergeNode(m.routes as Map<string, MergedNode>, route, r, group, false);
  }
}

function mergeNode(
  out: Map<string, MergedNode>,
  name: string,
  node: KeyNode,
  group: number,
  service: boolean,
): MergedNode {
  let m = out.get(name);
  if (m === undefined) {
    m = { agg: node.agg.clone(), routes: service ? new Map() : null, tracks: null, seen: node.seen, group };
    out.set(name, m);
    return m;
  }
  m.agg.merge(node.agg);
  if (m.group === group && node.seen < m.seen) m.seen = node.seen;
  return m;
}

/**
 * The keys in the order the window's own slices list them: by the own slice where first seen, then
 * by first record there (what one aggregate per own slice, merged in slice order, gives).
 */
function sortKeys(keys: Map<string, MergedNode>): Map<string, MergedNode> {
  const out = new Map<string, MergedNode>();
  for (const [service, node] of [...keys].sort(byFirstSeen)) {
    if (node.routes !== null && node.routes.size > 1) node.routes = new Map([...node.routes].sort(byFirstSeen));
    out.set(service, node);
  }
  return out;
}

function byFirstSeen(a: [string, MergedNode], b: [string, MergedNode]): number {
  return a[1].group - b[1].group || a[1].seen - b[1].seen;
}

/** True when some own slice of the window spans several of its grid's slices (insertion order is not the order then). */
function groupsSpan(w: Window): boolean {
  for (let i = 1; i < w.slices.length; i++)
    if (groupOf(w, w.slices[i] as Slice) === groupOf(w, w.slices[i - 1] as Slice)) return true;
  return false;
}

function groupOf(w: Window, s: Slice): number {
  return Math.floor(s.start / w.sliceMs);
}
