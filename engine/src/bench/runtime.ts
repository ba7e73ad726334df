/**
 * `node dist/bench/runtime.js` (part of `npm run bench -w engine`): the engine runtime against a
 * real nats-server started here (loopback, temp store, stopped at the end).
 *
 * 1. Throughput: N simulated events (50k per second of log time, 20 services × 20 routes, 20k
 *    users: the core benchmark's density) pre-published to TM_EVENTS (batches of 500, heartbeats, the
 *    end-of-recording heartbeat), then (after a first, untimed run: the code warm, as the core
 *    alone's is) one in-process engine from an empty checkpoint dir until
 *    every event is through the core and every pane is acknowledged by TM_PANES, then the same
 *    with a pane publisher thread (docs/decisions/0017-engine-throughput.md), each on fresh
 *    TM_PANES/TM_LATE. Baselines in the
 *    same run: the core alone on the same decoded events, the input path alone (consumers, decode,
 *    merge), a bare read (the same 8 ordered consumers decoding, nothing else), decoding the same
 *    batches in memory; publishes per event.
 * 1a. The held-out workload (runtime-held-out.ts): 300k events, 16 services, 20k users, 30 s of event
 *    time, on a fresh TM_EVENTS; engine / core alone, engine / bare read, sessions on / off.
 * 1b. Pipeline lag p50/p99 of a fresh engine fed live (runtime-lag.ts) at the demo's rate and at
 *    half the capacity measured in 1.
 * 1c. Backpressure (runtime-stall.ts, docs/decisions/0035-backpressure.md): an engine process fed
 *    live at 10k events/s with TM_PANES away for 5 s: its peak RSS against the same run without,
 *    the input held, the lag when TM_PANES is back and how long it takes to be under a second again,
 *    with the default window and with a 16-message one.
 * 2. Checkpoints with ~200k open (window, key) states: the synchronous snapshot() for comparison,
 *    the pause (input held while the snapshot encodes across event-loop turns, as the engine
 *    worker does, docs/decisions/0016-checkpoints-without-pause.md), the full write (encode,
 *    checksum, write, fsync, rename, fsync dir), bytes, restore time, the event-loop delay p99
 *    while checkpointing every 200 ms vs the same with the synchronous snapshot and hash (the way
 *    before ADR 0016) and vs the same ticker without, the pause histogram's p99, and `status()` on
 *    those states (the first call and the next ones, docs/decisions/0021-runtime-lean.md).
 * Bounded: ~150 s on this machine. TM_BENCH_RUNTIME_EVENTS overrides N; TM_BENCH_RUNTIME_PART=checkpoints
 * runs part 2 alone and prints it, TM_BENCH_RUNTIME_PART=stall part 1c, TM_BENCH_RUNTIME_PART=held-out part 1a
 * (runtime-held-out.ts), TM_BENCH_RUNTIME_PART=encoding the pane body encodings' rows (runtime-encoding.ts),
 * TM_BENCH_RUNTIME_PART=sink the publishers' rows (runtime-sink.ts) alone (engine/BENCHMARKS.md is left as it is).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCoreConfig } from "../core/index.js";
import type { LateRecord, Pane, TelemetryEvent } from "../protocol.js";
import { engineRun } from "./runtime-engine-run.js";
import { floorRows } from "./runtime-floor.js";
import { liveLag, type LagRun } from "./runtime-lag.js";
import { bestBareRead, coreAlone, decodeOnly, feedCore, inputPath } from "./runtime-baselines.js";
import { encodingRows } from "./runtime-encoding.js";
import { heldOutRows } from "./runtime-held-out.js";
import { checkpointRows } from "./runtime-checkpoints.js";
import { sinkRates } from "./runtime-sink.js";
import { stallRows } from "./runtime-stall.js";
import { EVENTS_PER_LOG_SECOND, natsServer, processCpuMs, publish, recording, row } from "./runtime-setup.js";

const EVENTS = Number(process.env.TM_BENCH_RUNTIME_EVENTS ?? 250_000);
/** `tidemark demo`'s default rate (deploy/src/config/demo-section.ts). */
const DEMO_RATE = 500;
const LAG_RUN_MS = 10_000;

async function throughput(
  url: string,
  serverPid: number,
  dir: string,
  events: readonly TelemetryEvent[],
): Promise<{ lines: string[]; eventsPerSecond: number }> {
  const core = defaultCoreConfig();
  const messages = await publish(url, events, core);
  const endTs = messages.at(-1)?.heartbeatTs ?? 0;
  // A first, untimed run: a running engine's code is optimized, as the core alone's is (run after it).
  const first = await engineRun(url, join(dir, "data-first"), events.length, endTs, false);
  const server0 = processCpuMs(serverPid);
  const run = await engineRun(url, join(dir, "data"), events.length, endTs, false);
  const serverCpuMs = processCpuMs(serverPid) - server0;
  const { ms, cpuMs, published, lateRecords, panes } = run;
  const threaded = await engineRun(url, join(dir, "data-thread"), events.length, endTs, true);
  const cpu0 = process.cpuUsage();
  const alone = coreAlone(events, core, endTs);
  const aloneCpu = process.cpuUsage(cpu0);
  const decode = decodeOnly(messages);
  const input = await inputPath(url, events.length);
  const read = await bestBareRead(url, events.length, serverPid);
  const bare = read.ms;
  const rate = (n: number, t: number): string => `${Math.round(n / (t / 1000)).toLocaleString("en-US")} events/s`;
  const lines = [
    row(
      `engine: TM_EVENTS → core → TM_PANES acked (${events.length} events at ${EVENTS_PER_LOG_SECOND / 1000}k/s of log time; ${(panes / events.length).toFixed(3)} panes/event)`,
      `${(ms / 1000).toFixed(2)} s`,
      `${rate(events.length, ms)}; ${panes} panes + ${lateRecords} late records acked in ${published} messages`,
    ),
    row(
      "  engine process CPU (user + system, all its threads) during that run",
      `${(cpuMs / 1000).toFixed(2)} s`,
      `${((cpuMs * 1e6) / events.length).toFixed(0)} ns/event, ${((cpuMs / ms) * 100).toFixed(0)}% of one core`,
    ),
    row("  nats-server CPU during that run", `${(serverCpuMs / 1000).toFixed(2)} s`, "storing, deduplicating, acking"),
    row(
      "  the same engine's first run in this process (its code not yet optimized): not compared",
      `${(first.ms / 1000).toFixed(2)} s`,
      `CPU ${(first.cpuMs / 1000).toFixed(2)} s`,
    ),
    row(
      "  the same engine with a pane publisher thread",
      `${(threaded.ms / 1000).toFixed(2)} s`,
      `${rate(events.length, threaded.ms)}; CPU ${(threaded.cpuMs / 1000).toFixed(2)} s`,
    ),
    row(
      "  baseline: the core alone on the same decoded events (no NATS, no-op sink)",
      `${(alone.ms / 1000).toFixed(2)} s`,
      `${rate(events.length, alone.ms)}; ${alone.panes} panes, ${alone.late} late records`,
    ),
    row(
      "  baseline: the input path alone (8 ordered consumers, decode, merge; no core)",
      `${(input / 1000).toFixed(2)} s`,
      rate(events.length, input),
    ),
    row(
      "  baseline: bare read, the same 8 ordered consumers reading and decoding, nothing else (best of 3)",
      `${(bare / 1000).toFixed(2)} s`,
      `${rate(events.length, bare)}; CPU ${(read.cpuMs / 1000).toFixed(2)} s here, ${(read.serverCpuMs / 1000).toFixed(2)} s in nats-server`,
    ),
    row(
      "  baseline: decoding the same event batches (in memory)",
      `${(decode / 1000).toFixed(2)} s`,
      rate(events.length, decode),
    ),
    row("  engine / core alone", `${(alone.ms / ms).toFixed(2)}×`, "of the core's rate reaches panes on NATS"),
    row("  engine / bare read", `${(bare / ms).toFixed(2)}×`, "of a bare reader's rate"),
    row(
      "  by CPU: core alone / engine (all its threads)",
      `${((aloneCpu.user + aloneCpu.system) / 1000 / cpuMs).toFixed(2)}×`,
      "the same ratio in CPU time, which a loaded machine distorts less than wall time",
    ),
    row("  input path / bare read", `${(bare / input).toFixed(2)}×`, ""),
    row(
      "  publishes per event (pane and late batches)",
      (published / events.length).toFixed(4),
      `${published} messages for ${panes + lateRecords} panes and late records`,
    ),
    ...(await floorRows({
      url,
      serverPid,
      events,
      core,
      endTs,
      coreAloneMs: alone.ms,
      decodeMs: decode,
      bareRead: read,
      engineMessages: published,
    })),
  ];
  return { lines, eventsPerSecond: events.length / (ms / 1000) };
}

/** Pipeline lag of a live run at the demo's rate and at half the engine's measured capacity. */
async function lagRows(url: string, dir: string, capacity: number): Promise<string[]> {
  const runs: Array<[string, LagRun]> = [
    ["the demo's rate", await liveLag(url, dir, DEMO_RATE, LAG_RUN_MS)],
    ["half the engine's capacity above", await liveLag(url, dir, Math.round(capacity / 2 / 1000) * 1000, LAG_RUN_MS)],
  ];
  const ms = (v: number | null): string => (v === null ? "none" : `${v} ms`);
  return runs.map(([what, r]) =>
    row(
      `pipeline lag p50 / p99, live ${LAG_RUN_MS / 1000} s at ${r.rate.toLocaleString("en-US")} events/s (${what})`,
      `${ms(r.p50)} / ${ms(r.p99)}`,
      `fed ${r.sent.toLocaleString("en-US")} events/s; ${r.publishesPerEvent.toFixed(4)} publishes per event`,
    ),
  );
}

/** Replaces the runtime section of engine/BENCHMARKS.md (run.ts writes the rest first). */
function record(lines: readonly string[]): void {
  const file = new URL("../../BENCHMARKS.md", import.meta.url);
  const marker = "\n## Engine runtime\n";
  const before = existsSync(file) ? readFileSync(file, "utf8") : "# Engine core benchmark\n";
  const kept = (before.includes(marker) ? before.slice(0, before.indexOf(marker)) : before).trimEnd();
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  writeFileSync(
    file,
    `${kept}\n${marker}\nRegenerated by \`node dist/bench/runtime.js\` (part of \`npm run bench -w engine\`; engine/src/bench/runtime.ts). ` +
      `Load average at the end: ${load}. Ratios and baselines are measured in the same run.\n\n\`\`\`\n${lines.join("\n")}\n\`\`\`\n\n` +
      `How to read it: panes and late records travel in batches, one message per input message and subject ` +
      `(docs/decisions/0012-batched-transport.md), written in the binary pane encoding and sent uncompressed ` +
      `(docs/decisions/0047-binary-panes.md, decision 4; the thread row publishes them from a thread of their own too). The held-out rows run the issue's ` +
      `workload (300k events, 16 services, 20k users, 30 s) on a fresh TM_EVENTS, each engine run in a process of its own after an untimed run there (the first one's row; the code then optimized, as in a running engine; the heap a worker's, docs/decisions/0051-engine-young-generation.md), the core alone in the benchmark's process, each series the fastest of 3 (the engine's rounds interleaved); the "by CPU" rows give the ratios in CPU time, which a loaded machine distorts less; its budget rows bound what any design spends on those events (the core writing its bodies on one thread, and every part spread over the cores) against each target (docs/decisions/0056-held-out-targets-on-two-cores.md). What the engine spends beyond the core-alone and ` +
      `input-path baselines, and on what (pane JSON, publishing, GC, checkpoints, status), is measured by ` +
      `\`node dist/bench/runtime-profile.js\` (the same engine run under the CPU profiler, grouped by activity); ` +
      `the breakdown before and after is in ADR 0017 and ADR 0021. The pane-sink rows measure publishing alone. The lag rows run ` +
      `a fresh engine while a worker thread publishes fresh events the way ingest does (bench/live-feed.ts). ` +
      `The outage rows feed an engine process the same way while TM_PANES is deleted for 5 s and created again (publishes ` +
      `answered "no responders", none acknowledged): the window absorbs what it can, then the input is held ` +
      `(docs/decisions/0035-backpressure.md); the baseline is the same run without the outage. ` +
      `The checkpoint rows: the pause is the time the input is held while the snapshot encodes in ~4 ms slices across event-loop turns (docs/decisions/0016-checkpoints-without-pause.md); the file's SHA-256 is taken in 256 KiB steps across turns too and the file written as pieces, with no copy of the snapshot (docs/decisions/0021-runtime-lean.md); the event loop is blocked at most a slice (plus garbage collection), and the row before ADR 0016 takes the same checkpoints the old way in the same run.\n`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-bench-runtime-"));
  if (process.env.TM_BENCH_RUNTIME_PART === "checkpoints") {
    process.stdout.write((await checkpointRows(dir)).join("\n") + "\n");
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  if (process.env.TM_BENCH_RUNTIME_PART === "encoding") {
    const events = recording(EVENTS);
    const kept: Array<Pane | LateRecord> = [];
    const core = defaultCoreConfig();
    feedCore(events, core, (events.at(-1)?.ts ?? 0) + 60_000, {
      pane: (p) => void kept.push(p),
      late: (r) => void kept.push(r),
    });
    process.stdout.write(
      encodingRows(kept, Number(process.env.TM_BENCH_RUNTIME_MESSAGES ?? 1288)).rows.join("\n") + "\n",
    );
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  if (process.env.TM_BENCH_RUNTIME_PART === "held-out") {
    const nats = await natsServer(dir);
    process.stdout.write((await heldOutRows(nats.url, nats.pid, dir)).join("\n") + "\n");
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  if (process.env.TM_BENCH_RUNTIME_PART === "sink") {
    const nats = await natsServer(dir);
    process.stdout.write((await sinkRates(nats.url)).join("\n") + "\n");
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  if (process.env.TM_BENCH_RUNTIME_PART === "stall") {
    const nats = await natsServer(dir);
    process.stdout.write((await stallRows(nats.url, dir)).join("\n") + "\n");
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  const nats = await natsServer(dir);
  try {
    const lines = [
      `engine runtime benchmark (real nats-server ${nats.url}, 8 partitions, default policies and windows)`,
    ];
    // The recording is not held past its part (the held-out part makes its own: runtime-held-out.ts).
    const t = await throughput(nats.url, nats.pid, dir, recording(EVENTS));
    lines.push(...t.lines);
    lines.push(...(await heldOutRows(nats.url, nats.pid, dir)));
    lines.push(...(await lagRows(nats.url, dir, t.eventsPerSecond)));
    lines.push(...(await stallRows(nats.url, dir)));
    lines.push(...(await sinkRates(nats.url)));
    lines.push(...(await checkpointRows(dir)));
    process.stdout.write(lines.join("\n") + "\n");
    record(lines);
  } finally {
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
