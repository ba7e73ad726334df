/**
 * The runtime benchmark's checkpoint part (runtime.ts, 2.): ~200k open (window, key) states
 * checkpointed the way the engine worker does (docs/decisions/0016-checkpoints-without-pause.md):
 * the synchronous snapshot() for comparison, the pause, the full write, restores, status() on
 * those states, the event-loop delay while checkpointing every 200 ms against the way before ADR
 * 0016 and against no checkpoints, and the pause histogram's p99.
 */
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { defaultCoreConfig, type SnapshotSteps } from "../core/index.js";
import type { EventTimeCore } from "../core/stream-core.js";
import { encodeCheckpoint } from "../runtime/checkpoint/checkpoint-codec.js";
import { CheckpointStore } from "../runtime/checkpoint/checkpoint-store.js";
import { useNativeCrc32 } from "../runtime/checkpoint/native-crc32.js";
import { CHECKPOINT_PAUSE_BUCKETS_S } from "../runtime/status/engine-metrics.js";
import { encodeAcrossTurns } from "../runtime/checkpoint/snapshot-turns.js";
import { openStates } from "./open-states.js";
import { restoreTimes } from "./restore-times.js";
import { row } from "./runtime-setup.js";
import { openWindowKeys } from "./window-keys.js";

export async function checkpointRows(dir: string): Promise<string[]> {
  useNativeCrc32(); // as both roles checkpoint and restore (docs/decisions/0052-native-crc32.md)
  const core = { ...defaultCoreConfig(), routeCapPerService: 200 };
  // 2000 services × 100 routes, one event each: ~202k aggregates, each shared by a 10 s and a 60 s
  // window (docs/decisions/0022-sliced-windows.md): ~404k open (window, key) states.
  const c = openStates(core, 2000);
  const windowKeys = openWindowKeys(c as EventTimeCore);
  const s0 = performance.now();
  const keys = c.status().stateKeys;
  const statusFirst = performance.now() - s0;
  const statuses: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    c.status();
    statuses.push(performance.now() - t0);
  }
  const store = new CheckpointStore(join(dir, "ckpt"), 3);
  await store.open();
  const header = {
    worker: "bench",
    partitionCount: 8,
    partitions: [0, 1, 2, 3, 4, 5, 6, 7],
    offsets: [],
    logTime: null,
    wallTime: 0,
  };
  const syncs: number[] = [];
  const pauses: number[] = [];
  const slices: number[] = [];
  const writes: number[] = [];
  let bytes = 0;
  let snapshot: Uint8Array = new Uint8Array();
  // As the engine worker does (engine-worker.ts): the snapshot encoded across event-loop turns
  // while the input is held (the pause), then the file written (its SHA-256 taken in steps across turns).
  const checkpoint = async (): Promise<void> => {
    const t0 = performance.now();
    const s = await encodeAcrossTurns(c.snapshotSteps?.() as SnapshotSteps);
    pauses.push(performance.now() - t0);
    slices.push(s.longestSliceMs);
    snapshot = s.bytes;
    bytes = (await store.write({ header, snapshot })).bytes;
    writes.push(performance.now() - t0);
  };
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    c.snapshot();
    syncs.push(performance.now() - t0);
    await checkpoint();
  }
  const restore = restoreTimes(core, snapshot, keys);
  // The state of ~202k open (window, key) states (1000 services): what "200k states" meant before
  // the windows shared their aggregates.
  const half = openStates(core, 1000);
  const halfKeys = openWindowKeys(half as EventTimeCore);
  const halfRestore = restoreTimes(core, half.snapshot(), half.status().stateKeys);
  const idle = await loopDelay(async () => undefined);
  // Before ADR 0016: the snapshot and the file's SHA-256 on the event loop in one piece.
  const before = await loopDelay(async () => void encodeCheckpoint({ header, snapshot: c.snapshot() }));
  pauses.length = 0;
  slices.length = 0;
  const busy = await loopDelay(checkpoint);
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.ceil(0.99 * xs.length) - 1] ?? NaN;
  const pause99 = p99(pauses) / 1000;
  const bucket = CHECKPOINT_PAUSE_BUCKETS_S.find((le) => pause99 <= le) ?? "+Inf";
  return [
    row(
      `checkpoint with ${keys.toLocaleString("en-US")} aggregates (${windowKeys.toLocaleString("en-US")} open (window, key) states): snapshot() synchronous, for comparison`,
      `${med(syncs).toFixed(1)} ms`,
      "median of 5",
    ),
    row(
      "  pause: input held while the snapshot encodes across event-loop turns",
      `${med(pauses).toFixed(1)} ms`,
      `median of 5; longest synchronous slice ${Math.max(...slices).toFixed(1)} ms (${((100 * Math.max(...slices)) / med(syncs)).toFixed(1)} % of snapshot() synchronous)`,
    ),
    row(
      "  full write: pause + encode + sha256 (256 KiB steps across turns) + write + fsync + rename + fsync dir",
      `${med(writes).toFixed(1)} ms`,
      `${(bytes / 1e6).toFixed(2)} MB`,
    ),
    row(
      "  restore from that checkpoint",
      `${restore.medianMs.toFixed(1)} ms`,
      `median of 3; the restored core holds ${(restore.heldBytes / 1e6).toFixed(1)} MB (gc'd heap + array buffers), ${Math.round(restore.heldBytes / keys)} B per aggregate`,
    ),
    row(
      `  restore of ${halfKeys.toLocaleString("en-US")} open (window, key) states (1000 services)`,
      `${halfRestore.medianMs.toFixed(1)} ms`,
      `median of 3; ${(halfRestore.heldBytes / 1e6).toFixed(1)} MB held`,
    ),
    row(
      "  status() with those states, again (no event since: no slice walked again)",
      `${med(statuses).toFixed(2)} ms`,
      `median of 5; the first call ${statusFirst.toFixed(1)} ms (every slice walked)`,
    ),
    row(
      "  event-loop delay p99 (max), checkpoint every 200 ms, 3 s",
      `${busy.p99.toFixed(1)} ms`,
      `max ${busy.max.toFixed(1)} ms; longest slice ${Math.max(...slices).toFixed(1)} ms`,
    ),
    row(
      "  tidemark_engine_checkpoint_pause_seconds p99 over those checkpoints",
      `${(pause99 * 1000).toFixed(1)} ms`,
      `${pauses.length} checkpoints; bucket le=${bucket}`,
    ),
    row(
      "  event-loop delay p99 (max), the same with snapshot() + SHA-256 in one piece (before ADR 0016)",
      `${before.p99.toFixed(1)} ms`,
      `max ${before.max.toFixed(1)} ms`,
    ),
    row(
      "  event-loop delay p99 (max), same ticker without checkpoints, 3 s",
      `${idle.p99.toFixed(1)} ms`,
      `max ${idle.max.toFixed(1)} ms`,
    ),
  ];
}

async function loopDelay(every200ms: () => Promise<void>): Promise<{ p99: number; max: number }> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const end = performance.now() + 3000;
  while (performance.now() < end) {
    await every200ms();
    await new Promise((r) => setTimeout(r, 200));
  }
  h.disable();
  return { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
}
