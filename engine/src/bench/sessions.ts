/**
 * `node dist/bench/sessions.js` (part of `npm run bench -w engine`): events/s of the core with
 * session windows on (StreamCore + session operator fed the same events, as the runtime would
 * drive them) vs tumbling only (StreamCore alone), the session operator alone, and sessions
 * without early panes, in one run on the same simulated stream. Each timed pass runs in a fresh
 * child process (one process's JIT and heap history skewed later runs), passes interleaved
 * round-robin, best of 3 per run. Each pass is timed in wall time and in the process's CPU time
 * (user + system): on a shared machine the CPU figure is the steadier one, and the ratios are
 * printed for both. TM_BENCH_SESSION_EVENTS overrides N (default 300k).
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import {
  createCore,
  createSessionOperator,
  defaultCoreConfig,
  simulate,
  type CoreConfig,
  type CoreOutput,
  type StreamCore,
} from "../core/index.js";
import { partitionOf, type TelemetryEvent } from "../protocol.js";

const EVENTS = Number(process.env.TM_BENCH_SESSION_EVENTS ?? 300_000);
const REPEATS = 3;
const SESSIONS = { gap: "60s", maxLength: "4h" };

interface Result {
  eventsPerSec: number;
  /** Events per second of this process's CPU time (user + system). */
  cpuEventsPerSec: number;
  panes: number;
  merges: number;
}

/** Early panes are per open session (not per service): the same policies without them, for sessions. */
function quiet(config: CoreConfig): CoreConfig {
  return { ...config, policies: config.policies.map((p) => ({ ...p, earlyEveryMs: null })) };
}

const RUNS: Record<string, { label: string; make: (c: CoreConfig) => StreamCore[] }> = {
  tumbling: { label: "tumbling only (StreamCore)", make: (c) => [createCore(c)] },
  both: { label: "tumbling + sessions", make: (c) => [createCore(c), createSessionOperator(c, SESSIONS)] },
  alone: { label: "session operator alone", make: (c) => [createSessionOperator(c, SESSIONS)] },
  quiet: {
    label: "tumbling + sessions, no early panes",
    make: (c) => [createCore(c), createSessionOperator(quiet(c), SESSIONS)],
  },
};

/** One timed pass in this process: feeds every event (and finish) to fresh operators. */
function once(name: string): Result {
  const config = defaultCoreConfig();
  // 5 min of traffic, 20 services, 1000 users: a user's requests to one service are ~20 s apart
  // at 300k events, so sessions (gap 60 s) hold many events and the late tail (up to 90 s) bridges some.
  const events = simulate({ seed: 1, events: EVENTS, spanMs: 300_000, services: 20, routes: 20, users: 1_000 });
  const parts = events.map((e) => partitionOf(e.service, config.partitions));
  const ops = (RUNS[name] as (typeof RUNS)[string]).make(config);
  let n = 0;
  const out: CoreOutput = { pane: () => void n++, late: () => {} };
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as TelemetryEvent;
    const p = parts[i] as number;
    for (const op of ops) op.event(p, e, out);
  }
  for (const op of ops) op.finish(out);
  const ns = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  const status = ops[ops.length - 1]?.status() as { merges?: number };
  return {
    eventsPerSec: (events.length / ns) * 1e9,
    cpuEventsPerSec: (events.length / (cpu.user + cpu.system)) * 1e6,
    panes: n,
    merges: status.merges ?? 0,
  };
}

function main(): void {
  const self = fileURLToPath(import.meta.url);
  const names = Object.keys(RUNS);
  const best = new Map<string, Result>();
  const bestCpu = new Map<string, number>();
  for (let r = 0; r < REPEATS; r++) {
    for (const name of names) {
      const res = JSON.parse(execFileSync(process.execPath, [self, name], { encoding: "utf8" })) as Result;
      if (res.eventsPerSec > (best.get(name)?.eventsPerSec ?? 0)) best.set(name, res);
      bestCpu.set(name, Math.max(bestCpu.get(name) ?? 0, res.cpuEventsPerSec));
    }
  }
  const get = (name: string): Result => best.get(name) as Result;
  const cpuOf = (name: string): number => bestCpu.get(name) as number;
  const config = defaultCoreConfig();
  console.log(
    `session windows: ${EVENTS.toLocaleString("en-US")} events, ${config.policies.length} policies (${config.policies.map((p) => p.name).join(", ")}), windows 10 s + 60 s, gap 60 s; best of ${REPEATS} fresh processes`,
  );
  console.log(`| ${"run".padEnd(36)} | events/s    | events/CPU-s | panes     |`);
  console.log(`|${"-".repeat(38)}|-------------|--------------|-----------|`);
  const num = (x: number, w: number): string => Math.round(x).toLocaleString("en-US").padStart(w);
  for (const name of names) {
    const r = get(name);
    console.log(
      `| ${(RUNS[name] as (typeof RUNS)[string]).label.padEnd(36)} | ${num(r.eventsPerSec, 11)} | ${num(cpuOf(name), 12)} | ${String(r.panes).padStart(9)} |`,
    );
  }
  const ratio = (name: string): string => (get(name).eventsPerSec / get("tumbling").eventsPerSec).toFixed(2);
  const cpuRatio = (name: string): string => (cpuOf(name) / cpuOf("tumbling")).toFixed(2);
  console.log(
    `sessions on / tumbling only: ${ratio("both")}x throughput (${ratio("quiet")}x without early session panes); session merges: ${get("alone").merges}`,
  );
  console.log(
    `by CPU time: ${cpuRatio("both")}x (${cpuRatio("quiet")}x without early session panes); load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
}

const child = process.argv[2];
if (child !== undefined) process.stdout.write(JSON.stringify(once(child)));
else main();
