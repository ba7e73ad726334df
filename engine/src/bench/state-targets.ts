/**
 * `node dist/bench/state-targets.js` (part of `npm run bench -w engine`): the two state targets of
 * docs/decisions/0049-compact-state.md, each beside a baseline measured in the same run.
 *
 * 1. Bytes per open (window, key) on the held-out workload (runtime-held-out.ts: 300k events,
 *    16 services × 20 routes, 20k users, 30 s of event time): the gc'd heap + array buffers a core
 *    fed those events holds (the same core measured, then freed) divided by its open (window, key)
 *    states. Baselines: the same state's snapshot bytes and status().stateBytes per open state, and
 *    the sketches' data packed (every aggregate's dataBytes(): registers, bins' spans): what no
 *    layout holds in less, so the target minus it is what headers, tracks and keys may take.
 *    Beside them, the 60 s windows' combines (window-combine.ts: their own copies of the keys of a
 *    window past its first slice), by their aggregates' heapBytes(), as stateBytes counts the slices'.
 * 2. The core alone on the same workload, fed the engine's input (core-alone.ts): events/s and CPU
 *    per event, median of 5 runs (docs/decisions/0050-state-layout.md).
 * 3. Restore of ~200k states (open-states.ts, 2000 services × 100 routes: 202k aggregates, 404k
 *    open (window, key) states; and 1000 services: 202k open states): restoreCore, median of 5, wall
 *    and CPU time. Baseline: one CRC-32 pass over the same snapshot bytes (a restore reads every byte
 *    once), so the ratio reads the same on a loaded machine.
 */
import { loadavg } from "node:os";
import { createCore, type CoreConfig } from "../core/index.js";
import { crc32, useCrc32 } from "../core/snapshot/byte-codec.js";
import { useNativeCrc32 } from "../runtime/checkpoint/native-crc32.js";
import type { EventTimeCore } from "../core/stream-core.js";
import type { Aggregate } from "../core/windows/aggregate.js";
import { coreAloneTimes, heldOutInput, type HeldOutInput } from "./core-alone.js";
import { partitionOf } from "../protocol.js";
import { gc, memoryInUse } from "./heap.js";
import { openStates } from "./open-states.js";
import { restoreTimes } from "./restore-times.js";
import { HELD_OUT } from "./runtime-held-out.js";
import { row } from "./runtime-setup.js";
import { openWindowKeys } from "./window-keys.js";

/** Targets of docs/decisions/0049-compact-state.md. */
const BYTES_TARGET = 1536;
const RESTORE_TARGET_MS = 300;

const met = (ok: boolean): string => (ok ? "met" : "NOT met");

interface HeldOutState {
  bytes: number;
  openStates: number;
  snapshotBytes: number;
  statusBytes: number;
  /** The windows' combines' aggregates, heapBytes() per open state. */
  combineBytes: number;
  combinedKeys: number;
  /** Every aggregate's dataBytes() (slices' and combines'), per open state. */
  dataBytes: number;
}

/** The held-out workload's core: its held memory (measured with the core, then without it). */
function heldOutState(input: HeldOutInput): HeldOutState {
  const config = input.config;
  let core: EventTimeCore | null = createCore(config) as EventTimeCore;
  const out = { pane: () => undefined, late: () => undefined };
  for (const e of input.events) core.event(partitionOf(e.service, config.partitions), e, out);
  gc();
  gc();
  const withCore = memoryInUse();
  const open = openWindowKeys(core);
  const snapshotBytes = core.snapshot().length;
  const statusBytes = core.status().stateBytes;
  const combines = combineSize(core);
  const data = dataSize(core);
  core = null;
  gc();
  gc();
  const bytes = withCore - memoryInUse();
  return {
    bytes: bytes / open,
    openStates: open,
    snapshotBytes: snapshotBytes / open,
    statusBytes: statusBytes / open,
    combineBytes: combines.bytes / open,
    combinedKeys: combines.keys,
    dataBytes: data / open,
  };
}

type KeyTree = Iterable<{ agg: Aggregate; routes: Map<string, { agg: Aggregate }> | null }>;

/** Every aggregate of `trees` (service keys, then each one's routes). */
function* aggregatesOf(...trees: KeyTree[]): Generator<Aggregate> {
  for (const nodes of trees)
    for (const node of nodes) {
      yield node.agg;
      for (const r of node.routes?.values() ?? []) yield r.agg;
    }
}

/** The windows' combines' key trees. */
function combines(core: EventTimeCore): KeyTree[] {
  return core.state.windowConfigs.flatMap((c) => [...c.windows.values()].map((w) => w.combine?.keys.values() ?? []));
}

/**
 * The windows' combines: their keys (services and routes) and their aggregates' heapBytes() (the
 * estimate status().stateBytes sums for the slices' aggregates; a heap measure of dropping them is
 * not steady: the collector frees other garbage with them).
 */
function combineSize(core: EventTimeCore): { keys: number; bytes: number } {
  let keys = 0;
  let bytes = 0;
  for (const agg of aggregatesOf(...combines(core))) {
    keys++;
    bytes += agg.heapBytes();
  }
  return { keys, bytes };
}

/** dataBytes() of every aggregate the core holds: the slices' and the windows' combines'. */
function dataSize(core: EventTimeCore): number {
  const slices = core.state.windowConfigs.flatMap((c) => [...c.slices.values()].map((s) => s.services.values()));
  let bytes = 0;
  for (const agg of aggregatesOf(...slices, ...combines(core))) bytes += agg.dataBytes();
  return bytes;
}

function coreAloneRow(input: HeldOutInput): string {
  const t = coreAloneTimes(input);
  const rate = (ms: number): string => Math.round(t.events / (ms / 1000)).toLocaleString("en-US");
  return row(
    "core alone, held-out workload on the engine's input (decoded batches): median of 5 runs",
    `${rate(t.medianMs)}/s`,
    `CPU ${((t.medianCpuMs * 1e6) / t.events).toFixed(0)} ns/event (best ${((t.bestCpuMs * 1e6) / t.events).toFixed(0)}), ${rate(t.medianCpuMs)} events per CPU second; ${t.panes} panes`,
  );
}

/** Median wall and CPU ms of `runs` CRC-32 passes over `bytes`. */
function crcPass(bytes: Uint8Array, runs = 5): { ms: number; cpuMs: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let k = 0; k < runs; k++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    crc32(bytes);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  return { ms: med(wall), cpuMs: med(cpu) };
}

function restoreRows(config: CoreConfig, services: number): string[] {
  let core: EventTimeCore | null = openStates(config, services) as EventTimeCore;
  const open = openWindowKeys(core);
  const aggregates = core.status().stateKeys;
  const snapshot = core.snapshot();
  core = null;
  // Both roles restore with node:zlib's CRC-32 (docs/decisions/0052-native-crc32.md); the tables' first, for
  // comparison, after one untimed restore, so that neither series pays for compiling the restore's code.
  useCrc32(null);
  restoreTimes(config, snapshot, aggregates, 1);
  const tables = restoreTimes(config, snapshot, aggregates, 5);
  const tablesCrc = crcPass(snapshot);
  useNativeCrc32();
  const r = restoreTimes(config, snapshot, aggregates, 5);
  const crc = crcPass(snapshot);
  const n = (v: number): string => v.toLocaleString("en-US");
  return [
    row(
      `restore of ${n(aggregates)} aggregates (${n(open)} open (window, key) states, ${services} services): wall, CPU`,
      `${r.medianMs.toFixed(1)} ms`,
      `CPU ${r.medianCpuMs.toFixed(1)} ms; median of 5; ${(snapshot.length / 1e6).toFixed(2)} MB of snapshot; holds ${(r.heldBytes / 1e6).toFixed(1)} MB; target ≤ ${RESTORE_TARGET_MS} ms: ${met(r.medianMs <= RESTORE_TARGET_MS)} by wall, ${met(r.medianCpuMs <= RESTORE_TARGET_MS)} by CPU`,
    ),
    row(
      "  the same with the core's CRC-32 tables instead of node:zlib's",
      `${tables.medianMs.toFixed(1)} ms`,
      `CPU ${tables.medianCpuMs.toFixed(1)} ms; node:zlib's / tables': ${(r.medianCpuMs / tables.medianCpuMs).toFixed(2)}× CPU`,
    ),
    row(
      "  baseline: one CRC-32 pass over the same snapshot bytes (node:zlib; the tables)",
      `${crc.ms.toFixed(1)} ms`,
      `CPU ${crc.cpuMs.toFixed(1)} ms; the tables ${tablesCrc.ms.toFixed(1)} ms; restore / CRC pass: ${(r.medianMs / crc.ms).toFixed(1)}× wall, ${(r.medianCpuMs / Math.max(crc.cpuMs, 0.001)).toFixed(1)}× CPU`,
    ),
  ];
}

function main(): void {
  const input = heldOutInput();
  const config = input.config;
  const held = heldOutState(input);
  const restoreConfig = { ...config, routeCapPerService: 200 };
  const lines = [
    "state targets (docs/decisions/0049-compact-state.md, 0050-state-layout.md)",
    row(
      `bytes per open (window, key), held-out workload (${HELD_OUT.events.toLocaleString("en-US")} events, ${HELD_OUT.services} × ${HELD_OUT.routes} routes, ${HELD_OUT.users.toLocaleString("en-US")} users): gc'd heap + array buffers`,
      `${held.bytes.toFixed(0)} B`,
      `${held.openStates} open states; target ≤ ${BYTES_TARGET} B: ${met(held.bytes <= BYTES_TARGET)}`,
    ),
    row(
      "  the windows' combines (copies of a window's keys past its first slice): aggregates' heapBytes()",
      `${held.combineBytes.toFixed(0)} B`,
      `${held.combinedKeys} combined keys; the slices' aggregates: ${held.statusBytes.toFixed(0)} B (stateBytes)`,
    ),
    row(
      "  baselines: the same state's snapshot bytes, status().stateBytes (the aggregates' own estimate)",
      `${held.snapshotBytes.toFixed(0)} B`,
      `stateBytes ${held.statusBytes.toFixed(0)} B; held / snapshot ${(held.bytes / held.snapshotBytes).toFixed(2)}×`,
    ),
    row(
      "  floor: the sketches' data packed (registers, bins' spans; every aggregate's dataBytes())",
      `${held.dataBytes.toFixed(0)} B`,
      `held / floor ${(held.bytes / held.dataBytes).toFixed(2)}×; the target leaves ${(BYTES_TARGET - held.dataBytes).toFixed(0)} B per open state for all else (held now: ${(held.bytes - held.dataBytes).toFixed(0)} B)`,
    ),
    coreAloneRow(input),
    ...restoreRows(restoreConfig, 2000),
    ...restoreRows(restoreConfig, 1000),
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  ];
  console.log(lines.join("\n"));
}

main();
