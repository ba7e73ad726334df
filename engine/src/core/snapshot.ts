/**
 * Snapshot codec (docs/semantics.md, "Snapshot"): everything the core holds — log time, partitions,
 * policy progress, slices with their aggregates, windows with pane sequence numbers, bias trackers,
 * the route registry. Timer queues are rebuilt from window state; their order is total, so a
 * restored core emits byte-identical panes. Layout: "TMCS" · version · config CRC · body · CRC-32
 * of all before.
 */
import type { AggregateKind } from "./aggregate.js";
import type { BiasPoint } from "./bias.js";
import { ByteReader, ByteWriter, crc32 } from "./byte-codec.js";
import { CoreError } from "./errors.js";
import { installSnapshotCodec, EventTimeCore, linkSlice } from "./stream-core.js";
import type { CoreConfig } from "./types.js";
import { firstWindowStart, type WindowSpec } from "./window-assigner.js";
import {
  readBiasSamples,
  readDelaySamples,
  readKeys,
  readPartitionClocks,
  readPoint,
  readPolicyProgress,
  readTracks,
  writeBiasSamples,
  writeDelaySamples,
  writeKeys,
  writePartitionClocks,
  writePoint,
  writePolicyProgress,
  writeTracks,
} from "./snapshot-parts.js";
import type { Slice, TrackNode, Window } from "./window-state.js";

const MAGIC = [0x54, 0x4d, 0x43, 0x53];
/** 2: bias points carry distinct users, bias samples carry usersPct. */
export const SNAPSHOT_VERSION = 2;

function configCrc(config: CoreConfig): number {
  return crc32(new TextEncoder().encode(JSON.stringify(config)));
}

function writeWindow(w: ByteWriter, win: Window, P: number): void {
  w.f64(win.start);
  w.bytes(win.stage);
  w.uint(win.closed);
  for (const t of win.lastLateAt) w.f64(t);
  w.uint(win.slices.length);
  for (const s of win.slices) w.f64(s.start);
  w.uint(win.tracks.size);
  for (const [service, node] of win.tracks) {
    w.string(service);
    writeTracks(w, node, P);
    const routes = node.routes as Map<string, TrackNode>;
    w.uint(routes.size);
    for (const [route, rn] of routes) {
      w.string(route);
      writeTracks(w, rn, P);
    }
  }
  w.bool(win.ref !== null);
  if (win.ref) {
    w.uint(win.ref.size);
    for (const [service, v] of win.ref) {
      w.string(service);
      writePoint(w, v);
    }
  }
}

function encode(core: EventTimeCore): Uint8Array {
  const w = new ByteWriter();
  for (const b of MAGIC) w.uint(b);
  w.uint(SNAPSHOT_VERSION);
  w.uint(configCrc(core.config));
  w.f64(core.logTime);
  w.f64(core.nextSweep);
  w.uint(core.eventsTotal);
  writePartitionClocks(w, core.parts);
  for (const p of core.pols) {
    writePolicyProgress(w, p);
    writeBiasSamples(w, p);
    writeDelaySamples(w, p);
  }
  w.uint(core.routes.overflowed);
  w.uint(core.routes.services.size);
  for (const [service, routes] of core.routes.services) {
    w.string(service);
    w.uint(routes.size);
    for (const [route, seen] of routes) {
      w.string(route);
      w.f64(seen.at);
    }
  }
  core.specs.forEach((_, wc) => {
    const slices = core.slices[wc] as Map<number, Slice>;
    w.uint(slices.size);
    for (const s of slices.values()) {
      w.f64(s.start);
      writeKeys(w, s.services);
    }
    const windows = core.windows[wc] as Map<number, Window>;
    w.uint(windows.size);
    for (const win of windows.values()) writeWindow(w, win, core.pols.length);
  });
  w.u32(crc32(w.view()));
  return w.view();
}

function corrupt(what: string): CoreError {
  return new CoreError("TM_SNAPSHOT_CORRUPT", `snapshot ${what}: restore from an older checkpoint`);
}

/** Decodes a snapshot into a fresh core; throws a coded CoreError on any mismatch. */
export function decodeSnapshot(config: CoreConfig, kind: AggregateKind, bytes: Uint8Array): EventTimeCore {
  if (bytes.length < 8) throw corrupt("is too short");
  const body = bytes.subarray(0, bytes.length - 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new ByteReader(body);
  for (const b of MAGIC) if (r.uint() !== b) throw corrupt("does not start with the tidemark core magic");
  const version = r.uint();
  if (version !== SNAPSHOT_VERSION)
    throw new CoreError(
      "TM_SNAPSHOT_VERSION",
      `snapshot version ${version} is not ${SNAPSHOT_VERSION}: start without it or use a matching tidemark`,
    );
  if (view.getUint32(body.length, true) !== crc32(body)) throw corrupt("fails its checksum");
  if (r.uint() !== configCrc(config))
    throw new CoreError(
      "TM_SNAPSHOT_CONFIG_MISMATCH",
      "snapshot was taken with a different core configuration: restore with the same policies and windows, or start fresh",
    );
  const core = new EventTimeCore(config, kind);
  try {
    readState(core, r, kind);
  } catch (e) {
    // A checksum-valid snapshot that still does not decode (e.g. a sketch codec error): coded too.
    if (e instanceof CoreError) throw e;
    throw corrupt(`does not decode (${(e as Error).message})`);
  }
  if (!r.done) throw corrupt("has trailing bytes");
  return core;
}

function readState(core: EventTimeCore, r: ByteReader, kind: AggregateKind): void {
  core.logTime = r.f64();
  core.nextSweep = r.f64();
  core.eventsTotal = r.uint();
  readPartitionClocks(r, core.parts);
  for (const p of core.pols) {
    readPolicyProgress(r, p);
    readBiasSamples(r, p);
    readDelaySamples(r, p, corrupt);
  }
  core.routes.overflowed = r.uint();
  for (let n = r.uint(); n > 0; n--) {
    const service = r.string();
    for (let m = r.uint(); m > 0; m--) core.routes.restore(service, r.string(), r.f64());
  }
  core.specs.forEach((_, wc) => readWindowConfig(core, wc, r, kind));
  for (const p of core.pols) {
    if (Number.isFinite(p.nextEarly) && p.cfg.earlyEveryMs !== null)
      core.timers.push({ due: p.nextEarly, kind: 0, policy: p.index, wc: -1, start: 0 });
  }
  core.updateMaxW();
}

function readWindowConfig(core: EventTimeCore, wc: number, r: ByteReader, kind: AggregateKind): void {
  const P = core.pols.length;
  const slices = core.slices[wc] as Map<number, Slice>;
  const spec = core.specs[wc] as WindowSpec;
  const size = spec.sizeMs;
  for (let n = r.uint(); n > 0; n--) {
    const start = r.f64();
    slices.set(start, {
      start,
      services: readKeys(r, kind),
      refs: 0,
      adds: 0,
      minEnd: firstWindowStart(spec, start) + size,
    });
  }
  for (let n = r.uint(); n > 0; n--) {
    const start = r.f64();
    const stage = r.bytes().slice();
    if (stage.length !== P + 1) throw corrupt("holds a window with the wrong policy count");
    const win: Window = {
      wc,
      exclusive: spec.slideMs === spec.sizeMs,
      start,
      end: start + size,
      slices: [],
      stage,
      closed: r.uint(),
      lastLateAt: Float64Array.from({ length: P }, () => r.f64()),
      tracks: new Map(),
      ref: null,
      earlyMark: new Float64Array(P).fill(-1),
    };
    for (let m = r.uint(); m > 0; m--) {
      const s = slices.get(r.f64());
      if (!s) throw corrupt("links a window to a missing slice");
      linkSlice(win, s);
    }
    for (let m = r.uint(); m > 0; m--) {
      const service = r.string();
      const node: TrackNode = { keyId: encodeURIComponent(service), tracks: readTracks(r, P, kind), routes: new Map() };
      for (let k = r.uint(); k > 0; k--) {
        const route = r.string();
        node.routes?.set(route, {
          keyId: `${node.keyId}/${encodeURIComponent(route)}`,
          tracks: readTracks(r, P, kind),
          routes: null,
        });
      }
      win.tracks.set(service, node);
    }
    if (r.bool()) {
      win.ref = new Map();
      for (let m = r.uint(); m > 0; m--) win.ref.set(r.string(), readPoint(r) as BiasPoint);
    }
    core.windows[wc]?.set(start, win);
    core.scheduleWindow(win);
  }
}

installSnapshotCodec(encode);
