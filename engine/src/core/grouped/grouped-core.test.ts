/**
 * A worker's core restored from another layout's checkpoints (grouped-core.ts,
 * docs/decisions/0057-elastic-workers.md): split (one worker's snapshot restored by two) and gathered
 * (two workers' snapshots restored by one), each then fed the rest of the stream in the
 * interleave's order, gives every key's last pane the value a straight run gives; a key's panes
 * come from the one worker that owns its partition; and a grouped core's snapshot restores into
 * a grouped core that goes on the same.
 */
import { describe, expect, it } from "vitest";
import { partitionOf, type Pane, type TelemetryEvent } from "../../protocol.js";
import { capture, type Capture } from "../__fixtures__/capture.js";
import { createCore, restoreCore } from "../create-core.js";
import { defaultCoreConfig } from "../default-config.js";
import { simulate } from "../simulation.js";
import type { CoreConfig, StreamCore } from "../types.js";
import { decodeGroupContainer } from "./group-container.js";
import { GroupedCore, type GroupCore } from "./grouped-core.js";

const P = 8;
const base = defaultCoreConfig();
const configOf = (lanes: number): CoreConfig => ({ ...base, partitions: lanes });
const KEYS = { partitionCount: P, partitionBy: "service" as const };
const events = simulate({ events: 6000, seed: 11, services: 12 });
const CUT = 3000;

/** A worker: its partitions in lane order and its core. */
interface Worker {
  partitions: number[];
  core: StreamCore;
}

/** Far enough past the stream's end for every policy to close every window (the end of a recording, as backfill sends it). */
const END = (events.at(-1) as TelemetryEvent).ingest_ts + 600_000;

/**
 * Feeds the events to the worker owning each one's partition (as its lane), a heartbeat to every
 * lane of every worker each second of ingest time, as ingest sends them; then the end-of-recording
 * heartbeat to every lane, which closes every window by the watermarks (no `finish`).
 */
function play(workers: readonly Worker[], stream: readonly TelemetryEvent[], out: Capture): void {
  playOpen(workers, stream, out);
  for (const w of workers) w.partitions.forEach((_, lane) => w.core.heartbeat(lane, END, out));
}

/** Each pane id's last pane (highest seq): what a consumer settles on. */
function settled(panes: readonly Pane[]): Map<string, { kind: string; value: Pane["value"] }> {
  const last = new Map<string, Pane>();
  for (const p of panes) {
    const had = last.get(p.id);
    if (had === undefined || p.seq >= had.seq) last.set(p.id, p);
  }
  return new Map([...last].map(([id, p]) => [id, { kind: p.kind, value: p.value }]));
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

function straight(): Capture {
  const out = capture();
  play([{ partitions: range(0, 7), core: createCore(configOf(P)) }], events, out);
  return out;
}

/** The first part of a run that goes on elsewhere: events and heartbeats, no end. */
function playOpen(workers: readonly Worker[], stream: readonly TelemetryEvent[], out: Capture): void {
  let beat = -Infinity;
  for (const e of stream) {
    if (e.ingest_ts >= beat + 1000) {
      beat = Math.floor(e.ingest_ts / 1000) * 1000;
      for (const w of workers) w.partitions.forEach((_, lane) => w.core.heartbeat(lane, beat, out));
    }
    const p = partitionOf(e.service, P);
    const w = workers.find((x) => x.partitions.includes(p)) as Worker;
    w.core.event(w.partitions.indexOf(p), e, out);
  }
}

/** `layout`'s workers run the first CUT events; their snapshots and what they emitted. */
function firstPart(layout: number[][]): { out: Capture; snapshots: Uint8Array[] } {
  const out = capture();
  const workers = layout.map((partitions) => ({ partitions, core: createCore(configOf(partitions.length)) }));
  playOpen(workers, events.slice(0, CUT), out);
  return { out, snapshots: workers.map((w) => w.core.snapshot()) };
}

/** A group of `partitions` restored from a snapshot of a worker that owned `old` (lane order). */
function group(snapshot: Uint8Array, old: number[], partitions: number[]): GroupCore {
  return {
    partitions,
    lanes: partitions.map((p) => old.indexOf(p)),
    coreLanes: old.length,
    core: restoreCore(configOf(old.length), snapshot),
  };
}

describe("GroupedCore", () => {
  const truth = settled(straight().panes);

  it("split: one worker's snapshot restored by two gives every pane the straight run's last value", () => {
    const { out, snapshots } = firstPart([range(0, 7)]);
    const snap = snapshots[0] as Uint8Array;
    const low = range(0, 3);
    const high = range(4, 7);
    const after = capture();
    play(
      [
        { partitions: low, core: new GroupedCore(low, [group(snap, range(0, 7), low)], KEYS) },
        { partitions: high, core: new GroupedCore(high, [group(snap, range(0, 7), high)], KEYS) },
      ],
      events.slice(CUT),
      after,
    );
    expect(settled([...out.panes, ...after.panes])).toEqual(truth);
    // No key's pane came from a worker that does not own its partition.
    const seen = new Map<string, number>();
    for (const p of after.panes) seen.set(`${p.id}#${p.seq}`, (seen.get(`${p.id}#${p.seq}`) ?? 0) + 1);
    expect([...seen].filter(([, n]) => n > 1)).toEqual([]);
  });

  it("gather: two workers' snapshots restored by one give the straight run's last values", () => {
    const low = range(0, 3);
    const high = range(4, 7);
    const { out, snapshots } = firstPart([low, high]);
    const all = range(0, 7);
    const gathered = new GroupedCore(
      all,
      [group(snapshots[0] as Uint8Array, low, low), group(snapshots[1] as Uint8Array, high, high)],
      KEYS,
    );
    const after = capture();
    play([{ partitions: all, core: gathered }], events.slice(CUT), after);
    expect(settled([...out.panes, ...after.panes])).toEqual(truth);
  });

  it("a grouped core's snapshot holds each group's, and restored as groups goes on the same", () => {
    const { out, snapshots } = firstPart([range(0, 7)]);
    const snap = snapshots[0] as Uint8Array;
    const mid = CUT + 1500;
    // 1 → 3 workers ([0-2], [3-5], [6-7]) for a while, then back to 1 from the three.
    const layout = [range(0, 2), range(3, 5), range(6, 7)];
    const three = layout.map((ps) => ({
      partitions: ps,
      core: new GroupedCore(ps, [group(snap, range(0, 7), ps)], KEYS),
    }));
    const middle = capture();
    playOpen(three, events.slice(CUT, mid), middle);
    const groups = three.flatMap((w) => {
      const parts = decodeGroupContainer(w.core.snapshot());
      return w.core
        .groups()
        .map((g, i) => ({ ...g, core: restoreCore(configOf(g.coreLanes), parts[i] as Uint8Array) }));
    });
    const all = range(0, 7);
    const after = capture();
    play([{ partitions: all, core: new GroupedCore(all, groups, KEYS) }], events.slice(mid), after);
    expect(settled([...out.panes, ...middle.panes, ...after.panes])).toEqual(truth);
  });

  it("a group's core retires the lanes no partition of it feeds: its status lists only the worker's", () => {
    const { snapshots } = firstPart([range(0, 7)]);
    const low = range(0, 3);
    const core = new GroupedCore(low, [group(snapshots[0] as Uint8Array, range(0, 7), low)], KEYS);
    const s = core.status();
    expect(s.partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
    expect(s.heldBackBy === null || s.heldBackBy < 4).toBe(true);
  });
});
