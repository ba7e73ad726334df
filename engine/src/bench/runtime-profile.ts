/**
 * `node dist/bench/runtime-profile.js [out.cpuprofile] [--pane-thread] [--no-profile] [--held-out]
 * [--cold] [--gzip] [--sessions]`: the engine
 * part of the runtime benchmark (runtime.ts, "Throughput") under the V8 CPU profiler, and where its
 * time goes (docs/decisions/0017-engine-throughput.md). Publishes the same recording to a
 * nats-server of its own, then profiles one in-process engine from an empty checkpoint dir until
 * every event is through the core and every pane acknowledged; prints the phases, the messages and
 * the process CPU, the main thread's samples grouped by activity (whole stack: core, pane and late
 * records written, publish, input, merge, checkpoint, status, GC), by area and the heaviest functions, and writes
 * the profile (default: tidemark-engine.cpuprofile in the temp dir; Chrome DevTools opens it; it
 * holds the main thread only). `--pane-thread` publishes from the pane publisher thread;
 * `--no-profile` only times the run. TM_BENCH_RUNTIME_EVENTS overrides the 250k events; `--held-out`
 * runs the held-out workload instead (runtime-held-out.ts), `--gzip` the engine with its bodies
 * gzip-compressed (--compress-panes on; that thread is not in the profile), `--sessions` with session
 * windows on (--sessions on). The profiled run follows an untimed
 * run of the same engine on fresh pane streams, as a running engine's code is optimized (the
 * benchmark's warm-up, engine/BENCHMARKS.md); `--cold` profiles the first run instead.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCoreConfig } from "../core/index.js";
import { parseEngineConfig } from "../runtime/config/config.js";
import { startEngine } from "../runtime/worker/start-engine.js";
import { silentLogger } from "./runtime-lag.js";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { simulate } from "../core/index.js";
import { HELD_OUT } from "./runtime-held-out.js";
import { deletePaneStreams, natsServer, publish, recording } from "./runtime-setup.js";

const EVENTS = Number(process.env.TM_BENCH_RUNTIME_EVENTS ?? 250_000);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The area a function's source belongs to. */
function area(url: string, name: string): string {
  if (name === "(garbage collector)") return "GC";
  if (name === "(idle)") return "idle";
  if (name === "(program)") return "program (V8 outside JS)";
  if (url.includes("/dist/core/") || url.includes("/sketches/")) return "engine core (and sketches)";
  if (url.includes("/dist/runtime/")) return "engine runtime";
  if (url.includes("/dist/protocol")) return "engine protocol";
  if (url.includes("@nats-io")) return "NATS client";
  if (url.startsWith("node:") || url === "") return "node / builtins";
  return "other";
}

/** What the engine was doing, from a sample's whole stack: the first rule any frame matches. */
const ACTIVITIES: Array<[string, (url: string, name: string) => boolean]> = [
  ["the profiler itself (its stop, after the run)", (u) => u === "node:inspector"],
  ["checkpoint (snapshot, encode, write)", (u) => /checkpoint-|\/core\/snapshot/.test(u)],
  ["status and metrics", (u) => /status-|engine-metrics/.test(u)],
  [
    "publish (sink, gzip hand-over, NATS framing, socket, acks)",
    (u) => /pane-sink|pane-thread-sink|pane-publisher|compressing-sink/.test(u),
  ],
  ["late records written (PaneRecords)", (u, n) => u.includes("emit-group") && n === "late"],
  [
    "panes written (PaneRecords, EmitGroup)",
    (u) => /pane-records|json-lines|emit-group|lane-groups|body-buffers/.test(u),
  ],
  ["core", (u) => u.includes("/dist/core/") || u.includes("/sketches/")],
  ["merge and pump", (u) => /partition-interleave|engine-worker/.test(u)],
  ["input (consumers, decode)", (u) => /partition-source|event-batch/.test(u)],
  ["NATS client, reading", (u) => u.includes("@nats-io")],
];

function summarize(p: Profile): string[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  const doing = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const f = (byId.get(id) as ProfileNode).callFrame;
    total += us;
    const a = area(f.url, f.functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
    const where = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(dist|node_modules)\//, "")}:${f.lineNumber + 1}`;
    fns.set(where, (fns.get(where) ?? 0) + us);
    const d = ["GC", "idle", "program (V8 outside JS)"].includes(a) ? a : activity(id, byId, parent);
    doing.set(d, (doing.get(d) ?? 0) + us);
  }
  const ms = (us: number): string =>
    `${(us / 1000).toFixed(0).padStart(6)} ms ${((us / total) * 100).toFixed(1).padStart(5)} %`;
  const top = (m: Map<string, number>, n: number): string[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `  ${ms(us)}  ${k}`);
  return [
    `main thread by activity (whole stack; total ${(total / 1000).toFixed(0)} ms):`,
    ...top(doing, 20),
    "self time by area:",
    ...top(areas, 20),
    "heaviest functions (self):",
    ...top(fns, 30),
  ];
}

function activity(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): string {
  const stack: Array<{ url: string; name: string }> = [];
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const f = (byId.get(at) as ProfileNode).callFrame;
    stack.push({ url: f.url, name: f.functionName });
  }
  for (const [what, match] of ACTIVITIES) if (stack.some((f) => match(f.url, f.name))) return what;
  return "other (timers, event loop, bench)";
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const thread = args.includes("--pane-thread");
  const profiling = !args.includes("--no-profile");
  const out = args.find((a) => !a.startsWith("--")) ?? join(tmpdir(), "tidemark-engine.cpuprofile");
  const dir = mkdtempSync(join(tmpdir(), "tidemark-bench-profile-"));
  const nats = await natsServer(dir);
  const session = new Session();
  session.connect();
  try {
    const events = args.includes("--held-out")
      ? simulate(HELD_OUT).sort((a, b) => a.ingest_ts - b.ingest_ts)
      : recording(EVENTS);
    const messages = await publish(nats.url, events, defaultCoreConfig());
    const endTs = messages.at(-1)?.heartbeatTs ?? 0;
    const compress: Record<string, string> = {
      ...(args.includes("--gzip") ? { "compress-panes": "on" } : {}),
      ...(args.includes("--sessions") ? { sessions: "on" } : {}),
    };
    const flags = (data: string): Record<string, string> => ({
      nats: nats.url,
      data,
      "metrics-port": "0",
      ...compress,
    });
    if (!args.includes("--cold")) {
      const warm = await startEngine(parseEngineConfig({ flags: flags(join(dir, "warm")) }), {
        logger: silentLogger(),
        paneThread: thread,
      });
      await until(() => allThrough(warm, events.length, endTs) && warm.host.sink.inFlight === 0);
      await warm.close();
      const nc = await connect({ servers: nats.url, noAsyncTraces: true });
      await deletePaneStreams(await jetstreamManager(nc));
      await nc.close();
    }
    const config = parseEngineConfig({ flags: flags(join(dir, "data")) });
    if (profiling) {
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 200 });
      await session.post("Profiler.start");
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const running = await startEngine(config, { logger: silentLogger(), paneThread: thread });
    const started = performance.now();
    const w = running.engine;
    let through = 0;
    while (!(
      w.eventsTotal >= events.length &&
      (w.interleave.logTime ?? 0) >= endTs &&
      running.host.sink.inFlight === 0
    )) {
      if (!through && w.eventsTotal >= events.length && (w.interleave.logTime ?? 0) >= endTs)
        through = performance.now();
      await new Promise((r) => setTimeout(r, 5));
    }
    const end = performance.now();
    const published = running.host.sink.acked;
    const cpu = process.cpuUsage(cpu0);
    const profile = profiling
      ? ((await session.post("Profiler.stop")) as unknown as { profile: Profile }).profile
      : null;
    await running.close();
    if (profile) writeFileSync(out, JSON.stringify(profile));
    const s = (t: number): string => `${((t - t0) / 1000).toFixed(3)} s`;
    const where = thread ? "panes published by the pane publisher thread" : "panes published on the main thread";
    const lines = [
      `${events.length} events, ${where}: started ${s(started)}, every event through the core ${s(through || end)}, every pane acked ${s(end)} (${published} messages); process CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s`,
      ...(profile ? [...summarize(profile), `profile written to ${out}`] : []),
    ];
    process.stdout.write(lines.join("\n") + "\n");
  } finally {
    session.disconnect();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

type Running = Awaited<ReturnType<typeof startEngine>>;

/** Every event through the core and the log time at the recording's end. */
function allThrough(r: Running, events: number, endTs: number): boolean {
  return r.engine.eventsTotal >= events && (r.engine.interleave.logTime ?? 0) >= endTs;
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

void main();
