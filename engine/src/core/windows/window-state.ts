/** Open state: slices hold the shared aggregates, windows hold each policy's pane progress. */
import type { Aggregate } from "./aggregate.js";
import type { BiasPoint } from "../dial/bias.js";
import { newPaneTracks, type PaneTracks } from "../panes/pane-tracks.js";

/**
 * One key's aggregate in a slice; a service node also holds its routes. In a tumbling window's
 * slice (the window's alone) the key node is also the key's track node: `tracks` is its pane
 * progress per policy, null before its first (docs/decisions/0019-core-light.md).
 */
export interface KeyNode extends TrackNode {
  agg: Aggregate;
  routes: Map<string, KeyNode> | null;
  /**
   * The record (clock.eventsTotal) that made it: a window of several slices lists its keys in the
   * order they were first seen in its own slices (window-combine.ts).
   */
  seen: number;
  /**
   * The node of the same key in a combine fed by this slice, once resolved (window-combine.ts):
   * a later event of the key is added there with no lookup; null when none (or after it is dropped).
   */
  folded: CombinedNode | null;
}

export interface Slice {
  start: number;
  services: Map<string, KeyNode>;
  /** Open windows containing this slice; freed at 0. */
  refs: number;
  /** Events added so far (early ticks skip a window with no new event). */
  adds: number;
  /** Earliest end of any window containing it: the fast on-time test. */
  minEnd: number;
  /** Windows whose combine holds this slice folded in: its events are added there too (window-combine.ts); null: none. */
  foldedInto: Window[] | null;
}

/** Pane progress of one key of a window, every policy's (panes/pane-tracks.ts; null: none yet); a service node also holds its routes. */
export interface TrackNode {
  tracks: PaneTracks | null;
  routes: Map<string, TrackNode> | null;
}

export const KIND_ON_TIME = 1;
export const KIND_FINAL = 2;
export const KIND_LATE_PENDING = 4;

export interface Window {
  /** Index of its window config. */
  configIndex: number;
  /** Tumbling: its one slice belongs to no other window, so its key nodes hold the tracks (not `tracks`). */
  exclusive: boolean;
  start: number;
  end: number;
  /** Its config's own slice, gcd(size, slide): keys are listed per own slice (window-combine.ts). */
  sliceMs: number;
  /** Slices of its grid, in start order. */
  slices: Slice[];
  /** Per policy, then the reference (the last index): KIND_* bits, the pane kinds it has emitted. */
  kinds: Uint8Array;
  /** Closers done (policy finals + reference); freed when it reaches kinds.length. */
  closed: number;
  /** Per policy: log time of the last late pane. */
  lastLateAt: Float64Array;
  /** Sliding windows only (empty when exclusive): per service its track node. */
  tracks: Map<string, TrackNode>;
  /** Reference values per service, set when the reference closes the window. */
  ref: Map<string, BiasPoint> | null;
  /** Per policy: the slices' `adds` at its last early tick (not persisted: only saves work). */
  earlyMark: Float64Array;
  /**
   * Smallest window size only (else null): per service, per policy, the events that missed the
   * policy's on-time pane (late or dropped) and their errors, as [events, errors] pairs.
   */
  lateness: Map<string, Float64Array> | null;
  /** Windows of several slices, while their panes read them: their keys combined (window-combine.ts; not persisted). */
  combine: WindowCombine | null;
}

/** A window with nothing closed yet, for `policies` policies and the reference. */
export function newWindow(
  configIndex: number,
  start: number,
  sizeMs: number,
  sliceMs: number,
  exclusive: boolean,
  policies: number,
  countsLateness = false,
): Window {
  return {
    configIndex,
    exclusive,
    start,
    end: start + sizeMs,
    sliceMs,
    slices: [],
    kinds: new Uint8Array(policies + 1),
    closed: 0,
    lastLateAt: new Float64Array(policies).fill(-Infinity),
    tracks: new Map(),
    ref: null,
    earlyMark: new Float64Array(policies).fill(-1),
    lateness: countsLateness ? new Map() : null,
    combine: null,
  };
}

/** Adds a slice to a window, keeping the window's slices in start order. */
export function linkSlice(w: Window, slice: Slice): void {
  let i = w.slices.length;
  while (i > 0 && (w.slices[i - 1] as Slice).start > slice.start) i--;
  w.slices.splice(i, 0, slice);
  slice.refs++;
  // A window that combines its slices is fed by this one too, from its first event (window-combine.ts).
  if (w.combine !== null) (slice.foldedInto ??= []).push(w);
}

/** Sum of the window's slices' adds: changes whenever any of its keys does. */
export function addsOf(w: Window): number {
  let n = 0;
  for (const s of w.slices) n += s.adds;
  return n;
}

/** Escaped names (keys are capped, so few): pane ids are built per pane, not kept per key. */
const escaped = new Map<string, string>();
const ESCAPED_MAX = 1 << 16;

function escapePart(name: string): string {
  let e = escaped.get(name);
  if (e !== undefined) return e;
  e = encodeURIComponent(name);
  if (escaped.size >= ESCAPED_MAX) escaped.clear();
  escaped.set(name, e);
  return e;
}

/** Pane-id key encoding (docs/semantics.md): URI-escaped parts, "/" between service and route. */
export function keyIdOf(service: string, route: string | undefined): string {
  const s = escapePart(service);
  return route === undefined ? s : `${s}/${escapePart(route)}`;
}

/** The key's track node (its `tracks` array made): the slice's key node in a tumbling window. */
export function trackNode(w: Window, service: string, route: string | undefined): TrackNode {
  if (w.exclusive) return keyTracks(w, (w.slices[0] as Slice).services.get(service) as KeyNode, route);
  let s = w.tracks.get(service);
  if (s === undefined) {
    s = { tracks: newTracks(w), routes: new Map() };
    w.tracks.set(service, s);
  }
  if (route === undefined) return s;
  const routes = s.routes as Map<string, TrackNode>;
  let r = routes.get(route);
  if (r === undefined) {
    r = { tracks: newTracks(w), routes: null };
    routes.set(route, r);
  }
  return r;
}

/** A tumbling window's key node of the service (or of its route) with its `tracks` made, the service's too. */
function keyTracks(w: Window, service: KeyNode, route: string | undefined): TrackNode {
  service.tracks ??= newTracks(w);
  if (route === undefined) return service;
  const r = service.routes?.get(route) as KeyNode;
  r.tracks ??= newTracks(w);
  return r;
}

function newTracks(w: Window): PaneTracks {
  return newPaneTracks(w.lastLateAt.length);
}

/** The track node of a key whose slice node the caller holds (no lookups in a tumbling window). */
export function trackNodeOf(w: Window, service: string, route: string | undefined, key: KeyNode): TrackNode {
  if (!w.exclusive) return trackNode(w, service, route);
  if (key.tracks === null) return keyTracks(w, (w.slices[0] as Slice).services.get(service) as KeyNode, route);
  return key;
}

/** The track node of a service, if it has one (read-only). */
export function serviceTracks(w: Window, service: string): TrackNode | undefined {
  return w.exclusive ? (w.slices[0] as Slice).services.get(service) : w.tracks.get(service);
}

/** A key of a window's combine: `group` is the own slice where it was first seen, `seen` its first record there. */
export interface CombinedNode extends KeyNode {
  group: number;
  routes: Map<string, CombinedNode> | null;
  /** The combine holding it: a slice node's `folded` link is live while it is its window's combine. */
  owner: WindowCombine;
}

/** Derived state of a window of several slices (not persisted: rebuilt at the first tick after a restore). */
export interface WindowCombine {
  keys: Map<string, CombinedNode>;
  /** A key was added since the keys were last put in first-seen order. */
  unsorted: boolean;
}
