/**
 * `node dist/bench/sessions.js` (part of `npm run bench -w engine`): the session operator
 * (docs/decisions/0034-sessions-at-scale.md) measured against the window core in the same run.
 *
 * - Throughput: events/s of tumbling only (StreamCore), tumbling + sessions (both fed each event, as
 *   the runtime drives them) and the session operator alone, on two streams: the seed-like stream
 *   (300k events over 5 min, 20 services, 1,000 users: long sessions, a late tail that bridges) and a
 *   real-cardinality one (10k events/s of log time for 30 s, 24 services, 100,000 users: mostly
 *   one-event sessions, the hard case for state). Each pass in a fresh child process, interleaved,
 *   best of 3, in wall time and in the process's CPU time (the steadier figure on a shared machine).
 * - State: bytes per open (service, user) session when 200,000 keys each open one session (their rows
 *   kept by every policy and the reference): the store's typed arrays and timer queues, counted
 *   exactly with their spare capacity, plus the growth of the gc'd JS heap (the users' strings).
 *   Process-wide array-buffer counters are not used: grown-out buffers linger in them after a GC.
 * - Output: pane JSON bytes per event on the real-cardinality stream, session panes and window panes.
 * - Timers: the operator's calendar queue against one binary heap on the same arming (timer-queues.ts).
 * TM_BENCH_SESSION_EVENTS overrides the seed-like stream's size.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import {
  createCore,
  createSessionOperator,
  defaultCoreConfig,
  simulate,
  type CoreOutput,
  type SessionCore,
  type StreamCore,
} from "../core/index.js";
import { partitionOf, type Pane, type TelemetryEvent } from "../protocol.js";
import { timerQueueRow } from "./timer-queues.js";

const EVENTS = Number(process.env.TM_BENCH_SESSION_EVENTS ?? 300_000);
const REPEATS = 3;
const SESSIONS = { gap: "60s", maxLength: "4h" };
const OPEN_KEYS = Number(process.env.TM_BENCH_OPEN_KEYS ?? 200_000);

interface Result {
  eventsPerSec: number;
  cpuEventsPerSec: number;
  panes: number;
  joins: number;
}

const STREAMS: Record<string, { label: string; events: () => TelemetryEvent[] }> = {
  seed: {
    label: `seed-like: ${EVENTS.toLocaleString("en-US")} events over 5 min, 20 services, 1,000 users`,
    events: () => simulate({ seed: 1, events: EVENTS, spanMs: 300_000, services: 20, routes: 20, users: 1_000 }),
  },
  real: {
    label: "real cardinality: 10k events/s for 30 s, 24 services, 100,000 users",
    events: () => simulate({ seed: 2, events: 300_000, spanMs: 30_000, services: 24, routes: 5, users: 100_000 }),
  },
};

const RUNS: Record<string, { label: string; make: () => StreamCore[] }> = {
  tumbling: { label: "tumbling only (StreamCore)", make: () => [createCore(defaultCoreConfig())] },
  both: {
    label: "tumbling + sessions",
    make: () => [createCore(defaultCoreConfig()), createSessionOperator(defaultCoreConfig(), SESSIONS)],
  },
  alone: { label: "session operator alone", make: () => [createSessionOperator(defaultCoreConfig(), SESSIONS)] },
};

function feed(ops: readonly StreamCore[], events: readonly TelemetryEvent[], out: CoreOutput): void {
  const partitions = defaultCoreConfig().partitions;
  for (const e of events) {
    const p = partitionOf(e.service, partitions);
    for (const op of ops) op.event(p, e, out);
  }
}

/** One timed pass in this process. */
function timed(stream: string, run: string): Result {
  const events = (STREAMS[stream] as (typeof STREAMS)[string]).events();
  const ops = (RUNS[run] as (typeof RUNS)[string]).make();
  let n = 0;
  const out: CoreOutput = { pane: () => void n++, late: () => {} };
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  feed(ops, events, out);
  for (const op of ops) op.finish(out);
  const ns = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  const status = ops[ops.length - 1]?.status() as { joins?: number };
  return {
    eventsPerSec: (events.length / ns) * 1e9,
    cpuEventsPerSec: (events.length / (cpu.user + cpu.system)) * 1e6,
    panes: n,
    joins: status.joins ?? 0,
  };
}

/** The JS heap after a full collection (typed arrays' backing stores are counted exactly apart). */
function heapBytes(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

/** Bytes per open (service, user) session: 200k keys, one event each, all open for every policy. */
function memory(): {
  bytesPerKey: number;
  heapPerKey: number;
  storePerKey: number;
  keys: number;
  rows: number;
  statusBytesPerKey: number;
} {
  const op = createSessionOperator(defaultCoreConfig(), SESSIONS);
  const out: CoreOutput = { pane: () => {}, late: () => {} };
  const t = 1_767_225_600_000;
  // Warm the operator's code and tables, then measure the keys alone.
  op.event(0, { ts: t, ingest_ts: t, service: "svc-00", route: "/", status: 200, latency_ms: 1, user: "warm" }, out);
  const before = heapBytes();
  for (let i = 0; i < OPEN_KEYS; i++) {
    const ts = t + Math.floor(i / 100);
    const e = {
      ts,
      ingest_ts: ts,
      service: `svc-${String(i % 24).padStart(2, "0")}`,
      route: "/",
      status: 200,
      latency_ms: 1,
      user: `user-${String(i).padStart(8, "0")}`,
    };
    op.event(partitionOf(e.service, 8), e, out);
  }
  const heap = heapBytes() - before;
  const s = (op as SessionCore).status();
  return {
    bytesPerKey: (heap + s.sessionStoreBytes) / s.sessionKeys,
    heapPerKey: heap / s.sessionKeys,
    storePerKey: s.sessionStoreBytes / s.sessionKeys,
    keys: s.sessionKeys,
    rows: s.sessionRows,
    statusBytesPerKey: s.stateBytes / s.sessionKeys,
  };
}

/** Pane JSON bytes per event on the real-cardinality stream, by kind of pane. */
function output(): { sessionBytes: number; windowBytes: number; events: number } {
  const events = (STREAMS.real as (typeof STREAMS)[string]).events();
  let sessionBytes = 0;
  let windowBytes = 0;
  const out: CoreOutput = {
    pane: (p: Pane) => {
      const n = JSON.stringify(p).length + 1;
      if (p.sessions) sessionBytes += n;
      else windowBytes += n;
    },
    late: () => {},
  };
  feed([createCore(defaultCoreConfig()), createSessionOperator(defaultCoreConfig(), SESSIONS)], events, out);
  return { sessionBytes, windowBytes, events: events.length };
}

function child(args: readonly string[]): unknown {
  const self = fileURLToPath(import.meta.url);
  return JSON.parse(execFileSync(process.execPath, ["--expose-gc", self, ...args], { encoding: "utf8" })) as unknown;
}

function main(): void {
  const num = (x: number, w: number): string => Math.round(x).toLocaleString("en-US").padStart(w);
  console.log(
    `session windows: default policies (dashboard, alerting, billing + the bias reference), windows 10 s + 60 s, gap 60 s; best of ${REPEATS} fresh processes`,
  );
  for (const stream of Object.keys(STREAMS)) {
    const best = new Map<string, Result>();
    const bestCpu = new Map<string, number>();
    for (let r = 0; r < REPEATS; r++)
      for (const run of Object.keys(RUNS)) {
        const res = child(["timed", stream, run]) as Result;
        if (res.eventsPerSec > (best.get(run)?.eventsPerSec ?? 0)) best.set(run, res);
        bestCpu.set(run, Math.max(bestCpu.get(run) ?? 0, res.cpuEventsPerSec));
      }
    console.log(`\n${(STREAMS[stream] as (typeof STREAMS)[string]).label}`);
    console.log(`| ${"run".padEnd(28)} | events/s    | events/CPU-s | panes     |`);
    console.log(`|${"-".repeat(30)}|-------------|--------------|-----------|`);
    for (const run of Object.keys(RUNS)) {
      const r = best.get(run) as Result;
      console.log(
        `| ${(RUNS[run] as (typeof RUNS)[string]).label.padEnd(28)} | ${num(r.eventsPerSec, 11)} | ${num(bestCpu.get(run) as number, 12)} | ${String(r.panes).padStart(9)} |`,
      );
    }
    const cpu = (run: string): number => bestCpu.get(run) as number;
    const wall = (run: string): number => (best.get(run) as Result).eventsPerSec;
    console.log(
      `sessions on / tumbling only: ${(cpu("both") / cpu("tumbling")).toFixed(2)}x by CPU time, ${(wall("both") / wall("tumbling")).toFixed(2)}x wall; session joins: ${(best.get("alone") as Result).joins}`,
    );
  }
  const m = child(["memory"]) as ReturnType<typeof memory>;
  console.log(
    `\nbytes per open (service, user) session: ${num(m.bytesPerKey, 0)} B = ${num(m.storePerKey, 0)} B of typed arrays and timer queues (exact, spare capacity included) + ${num(m.heapPerKey, 0)} B of gc'd JS heap (the user's string); ${m.keys.toLocaleString("en-US")} keys, ${m.rows.toLocaleString("en-US")} rows; status().stateBytes says ${num(m.statusBytesPerKey, 0)} B; target <= 200 B`,
  );
  const o = child(["output"]) as ReturnType<typeof output>;
  console.log(
    `pane JSON per event on the real-cardinality stream: session panes ${(o.sessionBytes / o.events).toFixed(1)} B, window panes ${(o.windowBytes / o.events).toFixed(1)} B, together ${((o.sessionBytes + o.windowBytes) / o.events).toFixed(1)} B (the whole stream's panes, finish() excluded)`,
  );
  console.log(child(["timers"]) as string);
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "timed") process.stdout.write(JSON.stringify(timed(rest[0] as string, rest[1] as string)));
else if (mode === "memory") process.stdout.write(JSON.stringify(memory()));
else if (mode === "output") process.stdout.write(JSON.stringify(output()));
else if (mode === "timers") process.stdout.write(JSON.stringify(timerQueueRow()));
else main();
