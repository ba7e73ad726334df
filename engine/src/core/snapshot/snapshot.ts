/**
 * Snapshot codec of the window core (docs/semantics.md, "Snapshot"): the whole CoreState — log
 * time, partitions, policy progress, the key registry, slices with their aggregates, windows with
 * pane sequence numbers and the values shown per pane kind, each policy's dial per window size. Timer queues are not written: the core rebuilds them from
 * the decoded state, and their order is total, so a restored core emits byte-identical panes.
 * Layout: "TMCS" · version · config CRC · body · CRC-32 of all before.
 */
import { V6_SLOTS } from "../panes/kind-slot.js";
import type { PaneTracks } from "../panes/pane-tracks.js";
import type { AggregateKind } from "../windows/aggregate.js";
import type { BiasPoint } from "../dial/bias.js";
import { ByteReader, ByteWriter, crc32 } from "./byte-codec.js";
import { hashedConfig } from "./config-hash.js";
import { newCoreState, type CoreState, type WindowConfigState } from "../core-state.js";
import { CoreError } from "../errors.js";
import { allSteps, crc32Steps, joinSteps } from "./snapshot-steps.js";
import type { CoreConfig, SnapshotSteps } from "../types.js";
import { minEndOf } from "../windows/window-lifecycle.js";
import { readPolicyDial, writePolicyDial } from "../dial/dial-snapshot.js";
import {
  readDelaySamples,
  readKeys,
  readKeyRegistry,
  readPartitionClocks,
  readPoint,
  readPolicyProgress,
  readTracks,
  writeDelaySamples,
  writeKeyRegistry,
  writeKeys,
  writePartitionClocks,
  writePoint,
  writePolicyProgress,
  writeTracks,
} from "./snapshot-parts.js";
import {
  linkSlice,
  newWindow,
  type KeyNode,
  type Slice,
  type TrackNode,
  type Window,
} from "../windows/window-state.js";

const MAGIC = [0x54, 0x4d, 0x43, 0x53];
/**
 * 2: bias points carry distinct users, bias samples carry usersPct. 3: partitions carry the log time
 * of their last record (idleness in log time); the key registry carries services (service cap).
 * 4: bias per (policy, window size, service, stage): pane tracks carry the values shown at each
 * pane kind, each window config its policies' dials (docs/decisions/0013-bias-per-service-stage-age.md).
 * 5: route keys' aggregates hold a HyperLogLog of precision hllPrecision − 4 (routeHllPrecision,
 * docs/decisions/0015-light-state.md); a version-4 slice would mix precisions in a merge.
 * 6: window configs share slice grids (docs/decisions/0022-sliced-windows.md): each config's grid is
 * written, then every config's slices, then every config's windows and dials; a window links the
 * slices of its grid.
 * 7: early panes after the window's end bucketed per early interval ("1+0" … "1+3+", three kind
 * slots more). Version 6 still restores: its slots are mapped (V6_SLOTS) and its pooled "1+"
 * figures dropped.
 */
export const SNAPSHOT_VERSION = 7;

function configCrc(config: CoreConfig): number {
  return crc32(new TextEncoder().encode(JSON.stringify(hashedConfig(config))));
}

function* writeWindow(w: ByteWriter, win: Window, policies: number): Generator<void, void, void> {
  w.f64(win.start);
  w.bytes(win.kinds);
  w.uint(win.closed);
  for (const t of win.lastLateAt) w.f64(t);
  w.uint(win.slices.length);
  for (const s of win.slices) w.f64(s.start);
  // A tumbling window's tracks are on its slice's key nodes: those that have some, in the slice's order.
  const tracks: ReadonlyMap<string, TrackNode> = win.exclusive ? (win.slices[0] as Slice).services : win.tracks;
  w.uint(countTracked(tracks));
  for (const [service, node] of tracks) {
    if (!hasTracks(node)) continue;
    w.string(service);
    writeTracks(w, node, policies);
    const routes = node.routes as Map<string, TrackNode>;
    w.uint(countTracked(routes));
    for (const [route, routeNode] of routes) {
      if (!hasTracks(routeNode)) continue;
      w.string(route);
      writeTracks(w, routeNode, policies);
    }
    yield;
  }
  w.bool(win.ref !== null);
  if (win.ref) {
    w.uint(win.ref.size);
    for (const [service, v] of win.ref) {
      w.string(service);
      writePoint(w, v);
    }
  }
  // The smallest size's late counts: per service, [events, errors] per policy.
  if (win.lateness === null) return;
  w.uint(win.lateness.size);
  for (const [service, v] of win.lateness) {
    w.string(service);
    for (const x of v) w.uint(x);
  }
}

/** A key with pane progress of its own or, for a service, of one of its routes. */
function hasTracks(node: TrackNode): boolean {
  if (node.tracks !== null) return true;
  if (node.routes !== null) for (const r of node.routes.values()) if (r.tracks !== null) return true;
  return false;
}

function countTracked(nodes: ReadonlyMap<string, TrackNode>): number {
  let n = 0;
  for (const node of nodes.values()) if (hasTracks(node)) n++;
  return n;
}

function* writeClockAndKeys(w: ByteWriter, state: CoreState): Generator<void, void, void> {
  const clock = state.clock;
  w.f64(clock.logTime);
  w.f64(state.keys.nextSweep);
  w.uint(clock.eventsTotal);
  writePartitionClocks(w, clock.partitions);
  for (const p of clock.policies) {
    writePolicyProgress(w, p);
    writeDelaySamples(w, p);
  }
  yield* writeKeyRegistry(w, state.keys);
}

/** Snapshot bytes of the core's whole state. */
export function encodeCoreSnapshot(config: CoreConfig, state: CoreState): Uint8Array {
  return allSteps(encodeCoreSnapshotSteps(config, state));
}

/**
 * The same bytes in steps: a yield after each key (a service with its routes) of a slice, a window
 * or the key registry, after each dial and each piece of the checksum. The state must not change
 * until the last step (docs/decisions/0016-checkpoints-without-pause.md).
 */
export function* encodeCoreSnapshotSteps(config: CoreConfig, state: CoreState): SnapshotSteps {
  const w = new ByteWriter();
  for (const b of MAGIC) w.uint(b);
  w.uint(SNAPSHOT_VERSION);
  w.uint(configCrc(config));
  yield* writeClockAndKeys(w, state);
  const policies = state.clock.policies.length;
  for (const c of state.windowConfigs) w.uint(c.grid);
  for (const c of state.windowConfigs) {
    w.uint(c.slices.size);
    for (const s of c.slices.values()) {
      w.f64(s.start);
      yield* writeKeys(w, s.services);
      writeSeen(w, s.services);
    }
  }
  for (const c of state.windowConfigs) {
    w.uint(c.windows.size);
    for (const win of c.windows.values()) yield* writeWindow(w, win, policies);
    for (const dial of c.dials) {
      writePolicyDial(w, dial);
      yield;
    }
  }
  w.u32(yield* crc32Steps(w.chunks()));
  return yield* joinSteps(w.chunks());
}

function corrupt(what: string): CoreError {
  return new CoreError("TM_SNAPSHOT_CORRUPT", `snapshot ${what}: restore from an older checkpoint`);
}

/** Checks magic, version, checksum and config; returns a reader positioned at the state. */
function openSnapshot(config: CoreConfig, bytes: Uint8Array): ByteReader {
  if (bytes.length < 8) throw corrupt("is too short");
  const body = bytes.subarray(0, bytes.length - 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new ByteReader(body);
  for (const b of MAGIC) if (r.uint() !== b) throw corrupt("does not start with the tidemark core magic");
  const version = r.uint();
  if (version !== SNAPSHOT_VERSION && version !== 6)
    throw new CoreError(
      "TM_SNAPSHOT_VERSION",
      `snapshot version ${version} is not ${SNAPSHOT_VERSION}: start without it or use a matching tidemark`,
    );
  if (version === 6) r.slotMap = V6_SLOTS;
  if (view.getUint32(body.length, true) !== crc32(body)) throw corrupt("fails its checksum");
  if (r.uint() !== configCrc(config))
    throw new CoreError(
      "TM_SNAPSHOT_CONFIG_MISMATCH",
      "snapshot was taken with a different core configuration: restore with the same policies and windows, or start fresh",
    );
  return r;
}

/** Decodes a snapshot into a core state; throws a coded CoreError on any mismatch. */
export function decodeCoreSnapshot(
  config: CoreConfig,
  kind: AggregateKind,
  bytes: Uint8Array,
  sharedSlices = true,
): CoreState {
  const r = openSnapshot(config, bytes);
  const state = newCoreState(config, sharedSlices);
  try {
    readClockAndKeys(r, state);
    const configs = state.windowConfigs;
    for (const c of configs) if (r.uint() !== c.grid) throw gridMismatch();
    for (const c of configs) readSlices(r, configs, c, kind);
    for (const c of configs) readWindowConfig(r, configs, c, state.clock.policies.length, kind);
  } catch (e) {
    // A checksum-valid snapshot that still does not decode (e.g. a sketch codec error): coded too.
    if (e instanceof CoreError) throw e;
    throw corrupt(`does not decode (${(e as Error).message})`);
  }
  if (!r.done) throw corrupt("has trailing bytes");
  return state;
}

function readClockAndKeys(r: ByteReader, state: CoreState): void {
  const clock = state.clock;
  clock.logTime = r.f64();
  state.keys.nextSweep = r.f64();
  clock.eventsTotal = r.uint();
  readPartitionClocks(r, clock.partitions);
  for (const p of clock.policies) {
    readPolicyProgress(r, p);
    readDelaySamples(r, p, corrupt);
  }
  readKeyRegistry(r, state.keys);
}

/** The keys' `seen` record numbers, services and routes in the slice's order (the order of a combined window's keys). */
function writeSeen(w: ByteWriter, services: ReadonlyMap<string, KeyNode>): void {
  for (const node of services.values()) {
    w.uint(node.seen);
    for (const r of node.routes?.values() ?? []) w.uint(r.seen);
  }
}

function readSeen(r: ByteReader, services: ReadonlyMap<string, KeyNode>): void {
  for (const node of services.values()) {
    node.seen = r.uint();
    for (const route of node.routes?.values() ?? []) route.seen = r.uint();
  }
}

function gridMismatch(): CoreError {
  return new CoreError(
    "TM_SNAPSHOT_CONFIG_MISMATCH",
    "snapshot was taken with other slice grids (shared slices on or off): restore with the same choice, or start fresh",
  );
}

function readSlices(
  r: ByteReader,
  configs: readonly WindowConfigState[],
  c: WindowConfigState,
  kind: AggregateKind,
): void {
  for (let n = r.uint(); n > 0; n--) {
    if (c.grid !== c.index) throw corrupt("holds slices of a window config that has none");
    const start = r.f64();
    const services = readKeys(r, kind);
    readSeen(r, services);
    c.slices.set(start, {
      start,
      services,
      refs: 0,
      adds: 0,
      minEnd: minEndOf(configs, c, start),
      foldedInto: null,
    });
  }
}

function readWindowConfig(
  r: ByteReader,
  configs: readonly WindowConfigState[],
  c: WindowConfigState,
  policies: number,
  kind: AggregateKind,
): void {
  const grid = configs[c.grid] as WindowConfigState;
  for (let n = r.uint(); n > 0; n--) {
    const win = readWindow(r, c, grid, policies, kind);
    c.windows.set(win.start, win);
  }
  for (const dial of c.dials) readPolicyDial(r, dial);
}

/**
 * Places a decoded key's tracks: on the slice's key node in a tumbling window (which must hold the
 * key), else in a new track node of `into`.
 */
function trackedNode(
  win: Window,
  into: Map<string, TrackNode>,
  name: string,
  tracks: PaneTracks,
  service: boolean,
): TrackNode {
  if (!win.exclusive) {
    const node: TrackNode = { tracks, routes: service ? new Map() : null };
    into.set(name, node);
    return node;
  }
  const keys = service ? (win.slices[0] as Slice | undefined)?.services : into;
  const node = keys?.get(name);
  if (node === undefined || node.tracks !== null) throw corrupt("holds pane tracks of a key its slice does not hold");
  node.tracks = tracks;
  return node;
}

function readWindow(
  r: ByteReader,
  c: WindowConfigState,
  grid: WindowConfigState,
  policies: number,
  kind: AggregateKind,
): Window {
  const win = newWindow(c.index, r.f64(), c.spec.sizeMs, c.spec.sliceMs, c.exclusive, policies, c.countsLateness);
  const kinds = r.bytes();
  if (kinds.length !== policies + 1) throw corrupt("holds a window with the wrong policy count");
  win.kinds.set(kinds);
  win.closed = r.uint();
  for (let i = 0; i < policies; i++) win.lastLateAt[i] = r.f64();
  for (let m = r.uint(); m > 0; m--) {
    const s = grid.slices.get(r.f64());
    if (!s) throw corrupt("links a window to a missing slice");
    linkSlice(win, s);
  }
  for (let m = r.uint(); m > 0; m--) {
    const service = r.string();
    const node = trackedNode(win, win.tracks, service, readTracks(r, policies, kind, corrupt), true);
    for (let k = r.uint(); k > 0; k--) {
      const route = r.string();
      trackedNode(win, node.routes as Map<string, TrackNode>, route, readTracks(r, policies, kind, corrupt), false);
    }
  }
  if (r.bool()) {
    win.ref = new Map();
    for (let m = r.uint(); m > 0; m--) win.ref.set(r.string(), readPoint(r) as BiasPoint);
  }
  if (win.lateness !== null)
    for (let m = r.uint(); m > 0; m--)
      win.lateness.set(
        r.string(),
        Float64Array.from({ length: 2 * policies }, () => r.uint()),
      );
  return win;
}
