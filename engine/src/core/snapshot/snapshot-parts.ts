/**
 * Snapshot pieces: partition clocks, policy progress, delay samples (shared by the window core's
 * snapshot.ts and the session operator's session-snapshot.ts), pane values, bias points, pane
 * tracks and keyed aggregates.
 */
import type { PaneValue } from "../../protocol.js";
import type { Aggregate, AggregateKind } from "../windows/aggregate.js";
import type { BiasPoint } from "../dial/bias.js";
import type { ByteReader, ByteWriter } from "./byte-codec.js";
import type { CoreError } from "../errors.js";
import type { KeyRegistry } from "../windows/key-registry.js";
import type { PolicyState } from "../panes/policy-state.js";
import { newKindPoints, POINT_FIELDS, pointOffset, setPoint, type KindPoints } from "../panes/kind-points.js";
import { slotFromV6, SLOTS } from "../panes/kind-slot.js";
import type { PartitionClock } from "../watermarks/watermark.js";
import type { KeyNode, TrackNode } from "../windows/window-state.js";
import {
  hasTrack,
  isLateDirty,
  lastAggOf,
  lastSlotOf,
  lastValueOf,
  lateAcceptedOf,
  lastCountOf,
  newPaneTracks,
  pointsOfTrack,
  seqOf,
  setTrack,
  type PaneTracks,
} from "../panes/pane-tracks.js";

/** Per partition: log time, largest event time, log time of its last record, spoke. */
export function writePartitionClocks(w: ByteWriter, partitions: readonly PartitionClock[]): void {
  for (const p of partitions) {
    w.f64(p.logTime);
    w.f64(p.maxTs);
    w.f64(p.lastEventAt);
    w.bool(p.spoken);
  }
}

export function readPartitionClocks(r: ByteReader, partitions: readonly PartitionClock[]): void {
  for (const p of partitions) {
    p.logTime = r.f64();
    p.maxTs = r.f64();
    p.lastEventAt = r.f64();
    p.spoken = r.bool();
  }
}

/** A policy's watermark and counters: W, emit delay sum, next early tick, dropped and late (pairs, events), emit count. */
export function writePolicyProgress(w: ByteWriter, p: PolicyState): void {
  w.f64(p.eventTimeWatermark);
  w.f64(p.emitDelaySum);
  w.f64(p.nextEarly);
  w.uint(p.droppedWindowEvents);
  w.uint(p.droppedEvents);
  w.uint(p.lateAcceptedWindowEvents);
  w.uint(p.lateAcceptedEvents);
  w.uint(p.emitDelayCount);
}

export function readPolicyProgress(r: ByteReader, p: PolicyState): void {
  p.eventTimeWatermark = r.f64();
  p.emitDelaySum = r.f64();
  p.nextEarly = r.f64();
  p.droppedWindowEvents = r.uint();
  p.droppedEvents = r.uint();
  p.lateAcceptedWindowEvents = r.uint();
  p.lateAcceptedEvents = r.uint();
  p.emitDelayCount = r.uint();
}

/** A percentile policy's recent delays per partition (nothing for other strategies). */
export function writeDelaySamples(w: ByteWriter, p: PolicyState): void {
  for (const d of p.samples ?? []) {
    for (const x of [d.filled, d.pos, d.sincePush]) w.uint(x);
    w.f64(d.quantile);
    for (let i = 0; i < d.filled; i++) w.f64(d.ring[i] as number);
  }
}

/** `corrupt` builds the snapshot's own coded error for a sample larger than configured. */
export function readDelaySamples(r: ByteReader, p: PolicyState, corrupt: (what: string) => CoreError): void {
  for (const d of p.samples ?? []) {
    d.filled = r.uint();
    d.pos = r.uint();
    d.sincePush = r.uint();
    d.quantile = r.f64();
    if (d.filled > d.ring.length) throw corrupt("holds a delay sample larger than configured");
    for (let i = 0; i < d.filled; i++) d.ring[i] = r.f64();
  }
}

/** A pane value: 0 (none), 1 (the value), 2 (the value and its `latencyAbove`: count, then threshold and count each). */
export function writeValue(w: ByteWriter, v: PaneValue | null): void {
  const above = v?.latencyAbove;
  w.uint(v === null ? 0 : above === undefined ? 1 : 2);
  if (v === null) return;
  w.uint(v.count);
  w.uint(v.errors);
  w.f64(v.errorRate);
  w.f64(v.p50);
  w.f64(v.p90);
  w.f64(v.p95);
  w.f64(v.p99);
  w.f64(v.p999);
  w.uint(v.users);
  if (above === undefined) return;
  const keys = Object.keys(above);
  w.uint(keys.length);
  for (const k of keys) {
    w.uint(Number(k));
    w.uint(above[k] as number);
  }
}

export function readValue(r: ByteReader): PaneValue | null {
  const tag = r.uint();
  if (tag === 0) return null;
  const v: PaneValue = {
    count: r.uint(),
    errors: r.uint(),
    errorRate: r.f64(),
    p50: r.f64(),
    p90: r.f64(),
    p95: r.f64(),
    p99: r.f64(),
    p999: r.f64(),
    users: r.uint(),
  };
  if (tag === 2) {
    const above: Record<string, number> = {};
    for (let n = r.uint(); n > 0; n--) above[String(r.uint())] = r.uint();
    v.latencyAbove = Object.freeze(above);
  }
  return Object.freeze(v);
}

export function writePoint(w: ByteWriter, v: BiasPoint | null): void {
  w.bool(v !== null);
  if (v === null) return;
  w.uint(v.count);
  w.uint(v.errors);
  w.f64(v.p99);
  w.uint(v.users);
}

export function readPoint(r: ByteReader): BiasPoint | null {
  return r.bool() ? { count: r.uint(), errors: r.uint(), p99: r.f64(), users: r.uint() } : null;
}

export function writeNullable(w: ByteWriter, v: number | null): void {
  w.f64(v ?? NaN);
}
export function readNullable(r: ByteReader): number | null {
  const v = r.f64();
  return Number.isNaN(v) ? null : v;
}

export function writeTracks(w: ByteWriter, node: TrackNode, policies: number): void {
  const t = node.tracks;
  for (let i = 0; i < policies; i++) {
    const has = hasTrack(t, i);
    w.bool(has);
    if (!has) continue;
    const tracks = t as PaneTracks;
    w.uint(seqOf(tracks, i));
    w.uint(lastCountOf(tracks, i) as number);
    writeValue(w, lastValueOf(tracks, i));
    const lastAgg = lastAggOf(tracks, i);
    w.bool(lastAgg !== null);
    if (lastAgg) w.bytes(lastAgg.encode());
    w.uint(lateAcceptedOf(tracks, i));
    w.bool(isLateDirty(tracks, i));
    writeKindPoints(w, pointsOfTrack(tracks, i) ?? null);
    w.uint(lastSlotOf(tracks, i) + 1);
  }
}

/**
 * A track's values per pane kind: the slot mask, then per set slot the value (count, errors and users as
 * integers, p99) and the nowcast if one was published (a flag, then its four numbers).
 */
export function writeKindPoints(w: ByteWriter, p: KindPoints | null): void {
  w.uint(p === null ? 0 : p.mask + 1);
  if (p === null) return;
  for (let slot = 0; slot < SLOTS; slot++) {
    const at = pointOffset(p, slot);
    if (at < 0) continue;
    const v = p.v;
    w.uint(v[at] as number);
    w.uint(v[at + 1] as number);
    w.f64(v[at + 2] as number);
    w.uint(v[at + 3] as number);
    const nowcast = !Number.isNaN(v[at + 4]);
    w.bool(nowcast);
    if (nowcast) for (let f = 4; f < POINT_FIELDS; f++) w.f64(v[at + f] as number);
  }
}

/** The saved slots' order: today's slots, or a snapshot's older layout mapped to them (-1: dropped). */
export function savedSlots(r: ByteReader): readonly number[] {
  return r.slotMap ?? CURRENT_SLOTS;
}
const CURRENT_SLOTS: readonly number[] = Array.from({ length: SLOTS }, (_, s) => s);

/** A saved `lastSlot` in today's slots. */
export function readLastSlot(r: ByteReader): number {
  const saved = r.uint() - 1;
  return r.slotMap === null ? saved : slotFromV6(saved);
}

export function readKindPoints(r: ByteReader): KindPoints | null {
  const m = r.uint();
  if (m === 0) return null;
  const p = newKindPoints();
  const mask = m - 1;
  const slots = savedSlots(r);
  for (let saved = 0; saved < slots.length; saved++) {
    if (!(mask & (1 << saved))) continue;
    const slot = slots[saved] as number;
    const count = r.uint();
    const errors = r.uint();
    const p99 = r.f64();
    const users = r.uint();
    const nowcast = r.bool() ? { count: r.f64(), errorRate: r.f64(), p99: r.f64(), users: r.f64() } : null;
    if (slot >= 0) setPoint(p, slot, count, errors, p99, users, nowcast);
  }
  return p;
}

/** `corrupt` builds the snapshot's own coded error (a track keeping both a last value and a last aggregate). */
export function readTracks(
  r: ByteReader,
  policies: number,
  kind: AggregateKind,
  corrupt: (what: string) => CoreError,
): PaneTracks {
  const out = newPaneTracks(policies);
  for (let i = 0; i < policies; i++) {
    if (!r.bool()) continue;
    const seq = r.uint();
    const lastCount = r.uint();
    const lastValue = readValue(r);
    const lastAgg = r.bool() ? kind.decode(r.bytes()) : null;
    // One slot keeps either (panes/pane-tracks.ts): a mode keeps a value (retracting) or an aggregate (discarding).
    if (lastValue !== null && lastAgg !== null)
      throw corrupt("holds a pane track with both a last value and a last aggregate");
    const lateAccepted = r.uint();
    const lateDirty = r.bool();
    const points = readKindPoints(r);
    setTrack(out, i, {
      seq,
      lastCount,
      lastValue,
      lastAgg,
      lateAccepted,
      lateDirty,
      points,
      lastSlot: readLastSlot(r),
    });
  }
  return out;
}

/** Keyed aggregates, a step per service (with its routes). */
export function* writeKeys(w: ByteWriter, services: Map<string, KeyNode>): Generator<void, void, void> {
  // Each aggregate's bytes are copied from the sketches' scratch buffer (no Uint8Array per aggregate).
  const put = (buf: Uint8Array, length: number): void => w.bytesOf(buf, length);
  w.uint(services.size);
  for (const [service, node] of services) {
    w.string(service);
    node.agg.encodeInto(put);
    const routes = node.routes as Map<string, KeyNode>;
    w.uint(routes.size);
    // forEach: no [key, value] pair allocated per route (a checkpoint visits every one).
    routes.forEach((rn, route) => {
      w.string(route);
      rn.agg.encodeInto(put);
    });
    yield;
  }
}

export function readKeys(r: ByteReader, kind: AggregateKind): Map<string, KeyNode> {
  const services = new Map<string, KeyNode>();
  // Straight from the checkpoint's buffer where the kind can (no Uint8Array view per key).
  const range = kind.decodeRange?.bind(kind);
  const agg = (): Aggregate => (range ? r.bytesWith(range) : kind.decode(r.bytes()));
  for (let n = r.uint(); n > 0; n--) {
    const service = r.string();
    const node: KeyNode = { agg: agg(), routes: new Map(), tracks: null, seen: 0, folded: null };
    for (let m = r.uint(); m > 0; m--)
      node.routes?.set(r.string(), { agg: agg(), routes: null, tracks: null, seen: 0, folded: null });
    services.set(service, node);
  }
  return services;
}

/**
 * The key registry: next sweep is the caller's; folded-event counters, then each service (last
 * seen) with its routes; a step per service.
 */
export function* writeKeyRegistry(w: ByteWriter, keys: KeyRegistry): Generator<void, void, void> {
  w.uint(keys.overflow.services);
  w.uint(keys.overflow.routes);
  w.uint(keys.services.size);
  for (const [service, entry] of keys.services) {
    w.string(service);
    w.f64(entry.at);
    w.uint(entry.routes.size);
    keys.forEachRoute(entry, (route, at) => {
      w.string(route);
      w.f64(at);
    });
    yield;
  }
}

export function readKeyRegistry(r: ByteReader, keys: KeyRegistry): void {
  keys.overflow.services = r.uint();
  keys.overflow.routes = r.uint();
  for (let n = r.uint(); n > 0; n--) {
    const service = r.string();
    keys.restoreService(service, r.f64());
    for (let m = r.uint(); m > 0; m--) keys.restoreRoute(service, r.string(), r.f64());
  }
}
