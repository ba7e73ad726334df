/**
 * Snapshot of the session cells (part of session-snapshot.ts): per window size its windows in map
 * order — start, each policy's kind bits and last late pane, the reference's values once it closed the
 * window — and per service (in map order, the order panes are emitted in) each policy's cell; then
 * each policy's early queue, naming its cells by (size, start, service).
 */
import { DDSketch } from "@tidemark/sketches";
import type { BiasPoint } from "../dial/bias.js";
import type { ByteReader, ByteWriter } from "../snapshot/byte-codec.js";
import type { CoreError } from "../errors.js";
import {
  readPoint,
  readLastSlot,
  readKindPoints,
  readValue,
  writePoint,
  writeKindPoints,
  writeValue,
} from "../snapshot/snapshot-parts.js";
import { newCell, newCellWindow, type CellWindow, type SessionCell } from "./cell-window.js";
import type { SessionState } from "./session-state.js";

function writeCell(w: ByteWriter, c: SessionCell): void {
  for (const x of [c.count, c.errors, c.events, c.lateAccepted, c.seq, c.lastEvents, c.lastSlot + 1]) w.uint(x);
  for (const b of [c.changed, c.queued, c.lateDirty]) w.bool(b);
  w.bytes(c.durations.encode());
  writeValue(w, c.last);
  writeKindPoints(w, c.points);
}

function readCell(r: ByteReader, window: CellWindow, service: string, policy: number, accuracy: number): SessionCell {
  const c = newCell(window, service, policy, accuracy);
  [c.count, c.errors, c.events, c.lateAccepted, c.seq, c.lastEvents] = [
    r.uint(),
    r.uint(),
    r.uint(),
    r.uint(),
    r.uint(),
    r.uint(),
  ];
  c.lastSlot = readLastSlot(r);
  [c.changed, c.queued, c.lateDirty] = [r.bool(), r.bool(), r.bool()];
  return Object.assign(c, { durations: DDSketch.decode(r.bytes()), last: readValue(r), points: readKindPoints(r) });
}

function writeWindow(w: ByteWriter, win: CellWindow): void {
  w.f64(win.start);
  for (const s of win.kinds) w.uint(s);
  for (const t of win.lastLateAt) w.f64(t);
  w.uint(win.closed);
  w.bool(win.ref !== null);
  if (win.ref !== null) {
    w.uint(win.ref.size);
    for (const [service, p] of win.ref) {
      w.string(service);
      writePoint(w, p);
    }
  }
  w.uint(win.services.size);
  for (const [service, cells] of win.services) {
    w.string(service);
    for (let i = 0; i < win.kinds.length; i++) {
      const c = cells[i];
      w.bool(c !== undefined);
      if (c !== undefined) writeCell(w, c);
    }
  }
}

function readWindow(r: ByteReader, size: number, sizeMs: number, policies: number, accuracy: number): CellWindow {
  const win = newCellWindow(size, r.f64(), sizeMs, policies);
  for (let i = 0; i < policies; i++) win.kinds[i] = r.uint();
  for (let i = 0; i < policies; i++) win.lastLateAt[i] = r.f64();
  win.closed = r.uint();
  if (r.bool()) {
    const ref = new Map<string, BiasPoint>();
    for (let n = r.uint(); n > 0; n--) ref.set(r.string(), readPoint(r) as BiasPoint);
    win.ref = ref;
  }
  for (let n = r.uint(); n > 0; n--) {
    const service = r.string();
    const cells = new Array<SessionCell | undefined>(policies);
    for (let i = 0; i < policies; i++) if (r.bool()) cells[i] = readCell(r, win, service, i, accuracy);
    win.services.set(service, cells);
  }
  return win;
}

/** The windows of every size, then the early queues (a step per window). */
export function* writeCells(w: ByteWriter, state: SessionState): Generator<void, void, void> {
  for (const windows of state.windows) {
    w.uint(windows.size);
    for (const win of windows.values()) {
      writeWindow(w, win);
      yield;
    }
  }
  for (const queue of state.early) {
    const live = queue.filter((c) => state.windows[c.window.size]?.get(c.window.start) === c.window);
    w.uint(live.length);
    for (const c of live) {
      w.uint(c.window.size);
      w.f64(c.window.start);
      w.string(c.service);
    }
  }
}

export function readCells(
  r: ByteReader,
  state: SessionState,
  accuracy: number,
  corrupt: (what: string) => CoreError,
): void {
  const policies = state.clock.policies.length;
  state.windows.forEach((windows, size) => {
    for (let n = r.uint(); n > 0; n--) {
      const win = readWindow(r, size, state.sizes[size] as number, policies, accuracy);
      windows.set(win.start, win);
    }
  });
  state.early.forEach((queue, policy) => {
    for (let n = r.uint(); n > 0; n--) {
      const size = r.uint();
      const start = r.f64();
      const cell = state.windows[size]?.get(start)?.services.get(r.string())?.[policy];
      if (cell === undefined) throw corrupt("names an early cell it does not hold");
      queue.push(cell);
    }
  });
}
