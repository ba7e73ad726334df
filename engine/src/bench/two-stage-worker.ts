/**
 * Child-process entry of the two-stage benchmark (two-stage.ts): one engine worker from JSON args
 * (argv[2], `WorkerArgs`), driven over the IPC channel. It says `loaded` once its modules are in,
 * starts the engine on `go`, then sends its progress every 25 ms (`status`) and answers `report`
 * with its own pipeline lag. SIGTERM (or the parent going away) closes the engine (final
 * checkpoint, NATS drained) and exits 0.
 */
import { parseEngineConfig } from "../runtime/config/config.js";
import { startEngine, type RunningEngine } from "../runtime/worker/start-engine.js";
import type { PublishStats } from "../runtime/output/pane-sink.js";
import { silentLogger } from "./runtime-lag.js";

export interface WorkerArgs {
  url: string;
  data: string;
  worker: string;
  /** A partition list as `--partitions` takes it ("all", "0-3"). */
  partitions: string;
  partials: boolean;
  /** More engine flags (runtime-stall.ts: a smaller window). */
  flags?: Record<string, string>;
}

export interface WorkerStatus {
  type: "status";
  events: number;
  logTime: number | null;
  inFlight: number;
  partials: number;
  /** Partial batches published and not yet acknowledged (stored). */
  partialsUnacked: number;
  /** Wall ms startEngine took (restore, connect, ensure the streams, start the consumers). */
  startMs: number;
  /** Backpressure (runtime-stall.ts): resident memory, TM_PANES's bytes in flight and resends, input held. */
  rssMb: number;
  inFlightBytes: number;
  resends: number;
  heldMs: number;
}

export interface WorkerReport {
  type: "report";
  p50: number | null;
  p99: number | null;
  events: number;
}

export type FromWorker = { type: "loaded" } | { type: "error"; message: string } | WorkerStatus | WorkerReport;
export type ToWorker = { type: "go" } | { type: "report" };

const STATUS_EVERY_MS = 25;

const args = JSON.parse(process.argv[2] ?? "{}") as WorkerArgs;
let running: RunningEngine | undefined;
let ticker: NodeJS.Timeout | undefined;
let stopping = false;
let startMs = 0;

function send(m: FromWorker): void {
  if (process.connected) process.send?.(m);
}

function status(r: RunningEngine): WorkerStatus {
  const w = r.engine;
  return {
    type: "status",
    events: w.eventsTotal,
    logTime: w.interleave.logTime ?? null,
    inFlight: r.host.sink.inFlight,
    partials: w.partialsTotal,
    partialsUnacked: partialsUnacked(w.outputs[0]?.out?.stats()),
    startMs,
    rssMb: process.memoryUsage.rss() / 1024 / 1024,
    inFlightBytes: r.host.sink.stats().inFlight.bytes,
    resends: r.host.sink.stats().resends,
    heldMs: r.host.gate.hold.totalMs(),
  };
}

function partialsUnacked(s: PublishStats | undefined): number {
  return s === undefined ? 0 : s.inFlight.messages + s.waiting.messages;
}

async function go(): Promise<void> {
  const config = parseEngineConfig({
    env: {},
    flags: {
      nats: args.url,
      data: args.data,
      worker: args.worker,
      partitions: args.partitions,
      partials: args.partials ? "on" : "off",
      "metrics-port": "0",
      ...args.flags,
    },
  });
  const t0 = performance.now();
  const r = await startEngine(config, { logger: silentLogger() });
  startMs = performance.now() - t0;
  running = r;
  send(status(r));
  ticker = setInterval(() => send(status(r)), STATUS_EVERY_MS);
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (ticker) clearInterval(ticker);
  await running?.close();
  process.exit(0);
}

process.on("message", (m: ToWorker) => {
  if (m.type === "go")
    go().catch((err: unknown) => {
      send({ type: "error", message: err instanceof Error ? err.message : String(err) });
      process.exit(1);
    });
  else if (m.type === "report" && running) {
    const w = running.engine;
    const lag = running.host.pipelineLag.percentiles(Date.now());
    send({ type: "report", p50: lag.p50, p99: lag.p99, events: w.eventsTotal });
  }
});
process.on("SIGTERM", () => void stop());
process.on("disconnect", () => void stop());
send({ type: "loaded" });
