/**
 * A window of several slices reads its keys combined (docs/decisions/0022-sliced-windows.md).
 *
 * Invariant: while a window has a combine, `combine.keys` holds, per key, the combination of that key over
 * every slice of the window, and each of those slices lists the window in its `foldedInto`. It
 * holds because (1) the combine is built from all the window's slices at once, and lists the window
 * in each; (2) every later event added to such a slice is added to the combine too (`addFolded`,
 * called by the core after each add); (3) a slice linked later is listed at once, while still
 * empty (window-state.ts, `linkSlice`). A slice's key node links to the combine's node of its key
 * once resolved (`KeyNode.folded`, live while its `owner` is the window's combine; cleared when the
 * combine is dropped), so a key's later events take no lookup (docs/decisions/0050-state-layout.md).
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
  const m = w.combine;
  if (m === null) return;
  w.combine = null;
  for (const s of w.slices) {
    unlink(s, m);
    const into = s.foldedInto;
    if (into === null) continue;
    const i = into.indexOf(w);
    if (i >= 0) into.splice(i, 1);
    if (into.length === 0) s.foldedInto = null;
  }
}

/** Clears the slice's links into `m` (a dropped combine is not kept alive by them). */
function unlink(slice: Slice, m: WindowCombine): void {
  for (const node of slice.services.values()) {
    if (node.folded?.owner === m) node.folded = null;
    node.routes?.forEach((r) => {
      if (r.folded?.owner === m) r.folded = null;
    });
  }
}

/**
 * After an event was added to a slice that some windows combine: adds it to those windows' nodes of
 * the same key. The slice's nodes link to the combine's once resolved (`folded`), so a key's later
 * events take no lookup; a key new to a combine starts as a copy of the slice's node, which then
 * holds this event alone.
 */
export function addFolded(
  slice: Slice,
  service: string,
  route: string,
  node: KeyNode,
  routeNode: KeyNode,
  input: RequestInput,
): void {
  const into = slice.foldedInto as Window[];
  for (let i = 0; i < into.length; i++) {
    const w = into[i] as Window;
    const s = node.folded;
    const r = routeNode.folded;
    if (s !== null && r !== null && s.owner === w.combine && r.owner === w.combine) {
      s.agg.addInput(input);
      r.agg.addInput(input);
    } else addResolving(w, slice, service, route, node, routeNode, input);
  }
}

/** addFolded for one window whose nodes of the key the slice's nodes do not link to yet: looks them up and links them. */
function addResolving(
  w: Window,
  slice: Slice,
  service: string,
  route: string,
  node: KeyNode,
  routeNode: KeyNode,
  input: RequestInput,
): void {
  const s = foldedService(w, slice, service, node);
  if (s === undefined) return;
  s.agg.addInput(input);
  const group = groupOf(w, slice);
  const m = w.combine as WindowCombine;
  const routes = s.routes as Map<string, CombinedNode>;
  const r = routes.get(route);
  if (r === undefined) {
    routes.set(route, copyOf(m, routeNode, group, false));
    m.unsorted = true;
  } else {
    r.agg.addInput(input);
    firstSeen(r, group, routeNode.seen);
    routeNode.folded = r;
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
 * The window combine's node of the service, its first-seen mark kept (linked from the slice's);
 * undefined when the key is new to the combine: it starts as a copy of the slice's node, which
 * already holds what was just added.
 */
function foldedService(w: Window, slice: Slice, service: string, node: KeyNode): CombinedNode | undefined {
  const group = groupOf(w, slice);
  const m = w.combine as WindowCombine;
  const s = m.keys.get(service);
  if (s === undefined) {
    m.keys.set(service, copyOf(m, node, group, true));
    m.unsorted = true;
    return undefined;
  }
  firstSeen(s, group, node.seen);
  node.folded = s;
  return s;
}

/** The combine of all the window's slices, listed in each. */
function build(w: Window): WindowCombine {
  const m: WindowCombine = { keys: new Map<string, CombinedNode>(), unsorted: true };
  for (const s of w.slices) {
    combineInto(m, s, groupOf(w, s));
    (s.foldedInto ??= []).push(w);
  }
  return m;
}

/** Combines a slice's keys into `m` (new keys appended, as copies), its nodes linked to the combine's. */
function combineInto(m: WindowCombine, slice: Slice, group: number): void {
  const out = m.keys;
  for (const [service, node] of slice.services) {
    const c = out.get(service);
    if (c === undefined) {
      out.set(service, copyOf(m, node, group, true));
      continue;
    }
    combineNode(c, node, group);
    const routes = c.routes as Map<string, CombinedNode>;
    for (const [route, r] of node.routes ?? []) {
      const cr = routes.get(route);
      if (cr === undefined) routes.set(route, copyOf(m, r, group, false));
      else combineNode(cr, r, group);
    }
  }
}

function combineNode(c: CombinedNode, node: KeyNode, group: number): void {
  c.agg.merge(node.agg);
  firstSeen(c, group, node.seen);
  node.folded = c;
}

/** A combine node copying a slice's node (linked from it): the aggregate cloned, a service's routes copied too. */
function copyOf(m: WindowCombine, node: KeyNode, group: number, service: boolean): CombinedNode {
  const routes = service ? new Map<string, CombinedNode>() : null;
  if (routes !== null) for (const [route, r] of node.routes ?? []) routes.set(route, copyOf(m, r, group, false));
  const c: CombinedNode = {
    agg: node.agg.clone(),
    routes,
    tracks: null,
    seen: node.seen,
    folded: null,
    group,
    owner: m,
  };
  node.folded = c;
  return c;
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
