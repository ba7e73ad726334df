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
 * The engine runs follow a first, untimed engine run in the same process (its time is printed
 * apart): a running engine's code is optimized, and the core alone, run after the engine runs, is
 * too; without it the first engine run also pays for compiling every function it calls (the
 * warm-up of the core benchmark, engine/BENCHMARKS.md; docs/decisions/0047-binary-panes.md).
 */
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { defaultCoreConfig, simulate, type CoreConfig } from "../core/index.js";
import { STREAM_EVENTS, type TelemetryEvent } from "../protocol.js";
import { bestBareRead, coreAlone, decodedInOrder } from "./runtime-baselines.js";
import { engineRun, type EngineRun } from "./runtime-engine-run.js";
import { backfillMessages, publish, row } from "./runtime-setup.js";

/** Runs of each series; the fastest is compared. */
const ROUNDS = 3;

export const HELD_OUT = { seed: 35, events: 300_000, spanMs: 30_000, services: 16, routes: 20, users: 20_000 };

/** The held-out events, in ingest order (made again where needed rather than kept: see heldOutRows). */
function heldOutEvents(): TelemetryEvent[] {
  return simulate(HELD_OUT).sort((a, b) => a.ingest_ts - b.ingest_ts);
}

/** Publishes the held-out events to a fresh TM_EVENTS; returns their count and the last heartbeat's time. */
async function publishHeldOut(url: string, core: CoreConfig): Promise<{ n: number; endTs: number }> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  await (await jetstreamManager(nc)).streams.delete(STREAM_EVENTS).catch(() => false);
  await nc.close();
  const events = heldOutEvents();
  const messages = await publish(url, events, core);
  return { n: events.length, endTs: messages.at(-1)?.heartbeatTs ?? 0 };
}

export async function heldOutRows(url: string, serverPid: number, dir: string): Promise<string[]> {
  const core = defaultCoreConfig();
  // The engine's runs do not share the process with the simulated events and their batches, which
  // a worker never holds: a larger old generation made this process's collections, not the
  // engine's, part of the engine's time (docs/decisions/0051-engine-young-generation.md). The
  // baselines after them make the same events and batches again.
  const { n, endTs } = await publishHeldOut(url, core);
  const first = await engineRun(url, join(dir, "held-out-first"), n, endTs, false);
  // Each series is the fastest of ROUNDS runs, the rounds interleaved, so a busy moment of a shared
  // machine weighs on no one series alone (the bare read's best of 3 is taken the same way).
  let engine: EngineRun | undefined;
  let packed: EngineRun | undefined;
  let sessions: EngineRun | undefined;
  for (let r = 0; r < ROUNDS; r++) {
    engine = fastest(engine, await engineRun(url, join(dir, `held-out-${r}`), n, endTs, false));
    const gzip = { "compress-panes": "on" };
    packed = fastest(packed, await engineRun(url, join(dir, `held-out-gzip-${r}`), n, endTs, false, gzip));
    const on = { sessions: "on" };
    sessions = fastest(sessions, await engineRun(url, join(dir, `held-out-sessions-${r}`), n, endTs, false, on));
  }
  if (engine === undefined || packed === undefined || sessions === undefined) throw new Error("no held-out round ran");
  const events = heldOutEvents();
  const messages = backfillMessages(events, core);
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
  return [
    row(
      `held-out workload: ${n.toLocaleString("en-US")} events, ${HELD_OUT.services} services × ${HELD_OUT.routes} routes, ${HELD_OUT.users.toLocaleString("en-US")} users, ${HELD_OUT.spanMs / 1000} s of event time; each series the fastest of ${ROUNDS}`,
      "",
      "",
    ),
    run("  engine, first run in this process (defaults; its code not yet optimized): not compared", first),
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
      "  engine / core alone (target ≥ 0.5×)",
      x(alone.ms / engine.ms),
      `compressed bodies: ${x(alone.ms / packed.ms)}`,
    ),
    row("  engine / bare read (target ≥ 0.3×)", x(read.ms / engine.ms), `compressed bodies: ${x(read.ms / packed.ms)}`),
    row("  engine sessions on / sessions off (target ≥ 0.5×)", x(engine.ms / sessions.ms), "rates: the same events"),
    row(
      "  by CPU (robust to a loaded machine): core alone / engine, all its threads",
      x(aloneCpuMs / engine.cpuMs),
      `compressed bodies: ${x(aloneCpuMs / packed.cpuMs)}; sessions on / off ${x(engine.cpuMs / sessions.cpuMs)}; bare read / engine ${x((read.cpuMs + read.serverCpuMs) / engine.cpuMs)}`,
    ),
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
