/**
 * A window of several slices reads its keys combined (docs/decisions/0022-sliced-windows.md).
 *
 * Invariant: while a window has a combine, `combine.keys` holds, per key, the combination of that key over
 * every slice of the window, and each of those slices lists the window in its `foldedInto`. It
 * holds because (1) the combine is built from all the window's slices at once, and lists the window
 * in each; (2) every later event added to such a slice is added to the combine too (`addFolded`,
 * called by the core after each add); (3) a slice linked later is listed at once, while still
 * empty (window-state.ts, `linkSlice`).
 *
 * So a window shares its slices' aggregates while it has one slice (a young window: two sketch
 * updates per event for the default windows, not four) and keeps its own once it reads two, as a
 * grid per config would: a tick reads the combine as it is, with no copy per tick, and every
 * policy's panes read the same one. Keys are listed in the order one aggregate per own slice gave:
 * own slice where first seen, then first record there.
 */
import type { RequestInput } from "@tidemark/sketches";
import type { KeyNode, CombinedNode, Slice, Window, WindowCombine } from "./window-state.js";

/** The window's keys combined over its slices, in first-seen order. */
export function combinedKeys(w: Window): Map<string, KeyNode> {
  const m = (w.combine ??= build(w));
  if (m.unsorted) {
    m.keys = sortKeys(m.keys);
    m.unsorted = false;
  }
  return m.keys;
}

/** Drops the window's combine (its panes are done, or it is freed); its slices stop feeding it. */
export function dropCombine(w: Window): void {
  if (w.combine === null) return;
  w.combine = null;
  for (const s of w.slices) {
    const into = s.foldedInto;
    if (into === null) continue;
    const i = into.indexOf(w);
    if (i >= 0) into.splice(i, 1);
    if (into.length === 0) s.foldedInto = null;
  }
}

/**
 * After an event was added to a slice that some windows combine: adds it to those windows' nodes of
 * the same key (a key new to a combine starts as a copy of the slice's node, which then holds this
 * event alone).
 */
export function addFolded(
  slice: Slice,
  service: string,
  route: string,
  node: KeyNode,
  routeNode: KeyNode,
  input: RequestInput,
): void {
  for (const w of slice.foldedInto as Window[]) {
    const s = foldedService(w, slice, service, node);
    if (s === undefined) continue;
    s.agg.addInput(input);
    const group = groupOf(w, slice);
    const m = w.combine as WindowCombine;
    const routes = s.routes as Map<string, CombinedNode>;
    const r = routes.get(route);
    if (r === undefined) {
      routes.set(route, copyOf(routeNode, group, false));
      m.unsorted = true;
    } else {
      r.agg.addInput(input);
      firstSeen(r, group, routeNode.seen);
    }
  }
}

/**
 * After an aggregate was merged into a slice's service node that some windows combine (the merge
 * stage: a service key without routes, place-partial.ts): merges it into those windows' nodes too.
 */
export function addFoldedAggregate(slice: Slice, service: string, node: KeyNode, agg: KeyNode["agg"]): void {
  for (const w of slice.foldedInto as Window[]) foldedService(w, slice, service, node)?.agg.merge(agg);
}

/**
 * The window combine's node of the service, its first-seen mark kept; undefined when the key is new
 * to the combine: it starts as a copy of the slice's node, which already holds what was just added.
 */
function foldedService(w: Window, slice: Slice, service: string, node: KeyNode): CombinedNode | undefined {
  const group = groupOf(w, slice);
  const m = w.combine as WindowCombine;
  const s = m.keys.get(service);
  if (s === undefined) {
    m.keys.set(service, copyOf(node, group, true));
    m.unsorted = true;
    return undefined;
  }
  firstSeen(s, group, node.seen);
  return s;
}

/** The combine of all the window's slices, listed in each. */
function build(w: Window): WindowCombine {
  const keys = new Map<string, CombinedNode>();
  for (const s of w.slices) {
    combineInto(keys, s, groupOf(w, s));
    (s.foldedInto ??= []).push(w);
  }
  return { keys, unsorted: true };
}

/** Combines a slice's keys into `out` (new keys appended, as copies). */
function combineInto(out: Map<string, CombinedNode>, slice: Slice, group: number): void {
  for (const [service, node] of slice.services) {
    const m = out.get(service);
    if (m === undefined) {
      out.set(service, copyOf(node, group, true));
      continue;
    }
    combineNode(m, node, group);
    const routes = m.routes as Map<string, CombinedNode>;
    for (const [route, r] of node.routes ?? []) {
      const mr = routes.get(route);
      if (mr === undefined) routes.set(route, copyOf(r, group, false));
      else combineNode(mr, r, group);
    }
  }
}

function combineNode(m: CombinedNode, node: KeyNode, group: number): void {
  m.agg.merge(node.agg);
  firstSeen(m, group, node.seen);
}

/** A combine node copying a slice's node: the aggregate cloned, a service's routes copied too. */
function copyOf(node: KeyNode, group: number, service: boolean): CombinedNode {
  const routes = service ? new Map<string, CombinedNode>() : null;
  if (routes !== null) for (const [route, r] of node.routes ?? []) routes.set(route, copyOf(r, group, false));
  return { agg: node.agg.clone(), routes, tracks: null, seen: node.seen, group };
}

/** Keeps the earliest (own slice, record) at which the key was seen. */
function firstSeen(m: CombinedNode, group: number, seen: number): void {
  if (group < m.group || (group === m.group && seen < m.seen)) {
    m.group = group;
    m.seen = seen;
  }
}

/** The keys in the order the window's own slices list them: by own slice where first seen, then first record there. */
function sortKeys(keys: Map<string, CombinedNode>): Map<string, CombinedNode> {
  const out = new Map<string, CombinedNode>();
  for (const [service, node] of [...keys].sort(byFirstSeen)) {
    if (node.routes !== null && node.routes.size > 1) node.routes = new Map([...node.routes].sort(byFirstSeen));
    out.set(service, node);
  }
  return out;
}

function byFirstSeen(a: [string, CombinedNode], b: [string, CombinedNode]): number {
  return a[1].group - b[1].group || a[1].seen - b[1].seen;
}

function groupOf(w: Window, s: Slice): number {
  return Math.floor(s.start / w.sliceMs);
}

/**
 * Calls fn for every key of the window, service first then its routes, in first-seen order; the
 * aggregate is the slice's own (one slice) or the window's combine of its slices (read-only: shared
 * by every policy's panes until a slice takes an event).
 */
export function forEachKey(w: Window, fn: (service: string, route: string | undefined, node: KeyNode) => void): void {
  const only = w.slices.length === 1 ? w.slices[0] : undefined;
  const services = only ? only.services : combinedKeys(w);
  for (const [service, node] of services) {
    fn(service, undefined, node);
    if (node.routes) for (const [route, r] of node.routes) fn(service, route, r);
  }
}
