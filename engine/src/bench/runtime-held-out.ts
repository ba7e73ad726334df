/**
 * The runtime benchmark's held-out workload (runtime.ts; docs/decisions/0047-binary-panes.md):
 * 300k events, 16 services × 20 routes, 20k users, 30 s of event time, pre-published to a fresh
 * TM_EVENTS. In one run: the engine (its defaults: pane bodies binary, not compressed), the same with
 * gzip-compressed bodies, the same with session windows on, the core alone on the same events and a
 * bare read and decode of the same TM_EVENTS; the ratios engine / core alone, engine / bare read
 * and sessions on / off (rates, so > 1 is faster).
 *
 * Every series (each engine run, the core alone, the bare read) is the fastest of 3, the engine's
 * rounds interleaved: one run of an engine on this shared machine varied by ~20 %.
 *
 * Each engine run is in a child process of its own (engine-child.ts) and follows an untimed run
 * there (the first one's time is printed apart): a running engine's code is optimized, and its heap
 * is a worker's, not this process's, which holds the simulated events and their batches
 * (docs/decisions/0051-engine-young-generation.md). The core alone runs here, the fastest of 3
 * (its first run compiles it).
 */
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { defaultCoreConfig, simulate } from "../core/index.js";
import { STREAM_EVENTS } from "../protocol.js";
import { bestBareRead, coreAlone, decodedInOrder } from "./runtime-baselines.js";
import { HELD_OUT_TARGETS, heldOutBudgetRows } from "./runtime-budget.js";
import { engineRunInChild, type EngineRun } from "./runtime-engine-run.js";
import { publish, row } from "./runtime-setup.js";

/** Runs of each series; the fastest is compared. */
const ROUNDS = 3;

export const HELD_OUT = { seed: 35, events: 300_000, spanMs: 30_000, services: 16, routes: 20, users: 20_000 };

export async function heldOutRows(url: string, serverPid: number, dir: string): Promise<string[]> {
  const events = simulate(HELD_OUT).sort((a, b) => a.ingest_ts - b.ingest_ts);
  const nc = await connect({ servers: url, noAsyncTraces: true });
  await (await jetstreamManager(nc)).streams.delete(STREAM_EVENTS).catch(() => false);
  await nc.close();
  const core = defaultCoreConfig();
  const messages = await publish(url, events, core);
  const endTs = messages.at(-1)?.heartbeatTs ?? 0;
  const n = events.length;
  // Each engine run is in a process of its own after an untimed run there, as a worker runs
  // (engine-child.ts). Each series is the fastest of ROUNDS such runs, the rounds interleaved, so a
  // busy moment of a shared machine weighs on no one series alone (the bare read's best of 3 is
  // taken the same way).
  let first: EngineRun | undefined;
  let engine: EngineRun | undefined;
  let packed: EngineRun | undefined;
  let sessions: EngineRun | undefined;
  const child = (name: string, flags?: Record<string, string>) =>
    engineRunInChild(url, join(dir, name), n, endTs, flags);
  for (let r = 0; r < ROUNDS; r++) {
    const plain = await child(`held-out-${r}`);
    first ??= plain.warm;
    engine = fastest(engine, plain.timed);
    packed = fastest(packed, (await child(`held-out-gzip-${r}`, { "compress-panes": "on" })).timed);
    sessions = fastest(sessions, (await child(`held-out-sessions-${r}`, { sessions: "on" })).timed);
  }
  if (first === undefined || engine === undefined || packed === undefined || sessions === undefined)
    throw new Error("no held-out round ran");
  const { alone, cpuMs: aloneCpuMs } = fastestAlone(() => coreAlone(events, core, endTs));
  // The same, on the events decoded from the published batches: the objects the engine's core is fed.
  const decoded = decodedInOrder(events, messages, core.partitions);
  const { alone: aloneDecoded, cpuMs: aloneDecodedCpuMs } = fastestAlone(() => coreAlone(decoded, core, endTs));
  const read = await bestBareRead(url, n, serverPid);
  const readCpuMs = read.cpuMs + read.serverCpuMs;
  const rate = (ms: number): string => `${Math.round(n / (ms / 1000)).toLocaleString("en-US")} events/s`;
  const run = (what: string, r: EngineRun): string =>
    row(
      what,
      `${(r.ms / 1000).toFixed(2)} s`,
      `${rate(r.ms)}; CPU ${(r.cpuMs / 1000).toFixed(2)} s; ${r.panes} panes + ${r.lateRecords} late in ${r.published} messages`,
    );
  const x = (v: number): string => `${v.toFixed(2)}×`;
  const budget = await heldOutBudgetRows({
    url,
    serverPid,
    decoded,
    core,
    endTs,
    engineMessages: engine.published,
    coreAloneMs: alone.ms,
    read,
  });
  return [
    row(
      `held-out workload: ${n.toLocaleString("en-US")} events, ${HELD_OUT.services} services × ${HELD_OUT.routes} routes, ${HELD_OUT.users.toLocaleString("en-US")} users, ${HELD_OUT.spanMs / 1000} s of event time; each series the fastest of ${ROUNDS}`,
      "",
      "",
    ),
    run("  engine, first run in its process (defaults; its code not yet optimized): not compared", first),
    run("  engine (defaults: pane bodies binary, not compressed)", engine),
    run("  engine, pane bodies gzip-compressed (--compress-panes on)", packed),
    run("  engine with session windows on (--sessions on), bodies as the defaults", sessions),
    row(
      "  baseline: the core alone on the same events (simulate()'s objects, not decoded)",
      `${(alone.ms / 1000).toFixed(2)} s`,
      `${rate(alone.ms)}; CPU ${(aloneCpuMs / 1000).toFixed(2)} s`,
    ),
    row(
      "  baseline: the core alone on the same events decoded from the published batches (the engine's input)",
      `${(aloneDecoded.ms / 1000).toFixed(2)} s`,
      `${rate(aloneDecoded.ms)}; CPU ${(aloneDecodedCpuMs / 1000).toFixed(2)} s; ${((aloneDecoded.ms * 1e6) / n).toFixed(0)} ns/event wall, ${((aloneDecodedCpuMs * 1e6) / n).toFixed(0)} ns/event CPU`,
    ),
    row(
      "  baseline: bare read and decode of the same TM_EVENTS (8 ordered consumers; best of 3)",
      `${(read.ms / 1000).toFixed(2)} s`,
      `${rate(read.ms)}; CPU ${(read.cpuMs / 1000).toFixed(2)} s here, ${(read.serverCpuMs / 1000).toFixed(2)} s in nats-server`,
    ),
    row(
      "  core alone / bare read (rates; docs/decisions/0048-core-hot-path.md)",
      x(read.ms / alone.ms),
      `on the decoded events: ${x(read.ms / aloneDecoded.ms)}; by CPU (bare read here + in nats-server / core): ${x(readCpuMs / aloneCpuMs)}, decoded ${x(readCpuMs / aloneDecodedCpuMs)}`,
    ),
    row(
      `  engine / core alone (target ≥ ${HELD_OUT_TARGETS.coreAlone}×)`,
      x(alone.ms / engine.ms),
      `compressed bodies: ${x(alone.ms / packed.ms)}`,
    ),
    row(
      `  engine / bare read (target ≥ ${HELD_OUT_TARGETS.bareRead}×)`,
      x(read.ms / engine.ms),
      `compressed bodies: ${x(read.ms / packed.ms)}`,
    ),
    row("  engine sessions on / sessions off (target ≥ 0.5×)", x(engine.ms / sessions.ms), "rates: the same events"),
    row(
      "  by CPU (robust to a loaded machine): core alone / engine, all its threads",
      x(aloneCpuMs / engine.cpuMs),
      `compressed bodies: ${x(aloneCpuMs / packed.cpuMs)}; sessions on / off ${x(engine.cpuMs / sessions.cpuMs)}; bare read / engine ${x((read.cpuMs + read.serverCpuMs) / engine.cpuMs)}`,
    ),
    ...budget,
  ];
}

function fastest(best: EngineRun | undefined, run: EngineRun): EngineRun {
  return best === undefined || run.ms < best.ms ? run : best;
}

/** The fastest of ROUNDS runs of the core alone, with that run's CPU. */
function fastestAlone(run: () => { ms: number }): { alone: { ms: number }; cpuMs: number } {
  let best: { alone: { ms: number }; cpuMs: number } | undefined;
  for (let r = 0; r < ROUNDS; r++) {
    const cpu0 = process.cpuUsage();
    const alone = run();
    const cpu = process.cpuUsage(cpu0);
    if (best === undefined || alone.ms < best.alone.ms) best = { alone, cpuMs: (cpu.user + cpu.system) / 1000 };
  }
  return best as { alone: { ms: number }; cpuMs: number };
}
