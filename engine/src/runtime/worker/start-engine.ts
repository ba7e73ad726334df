/**
 * `startEngine(config)`: the engine role (docs/operations.md, "Engine workers"), in named steps:
 * connect, check the streams and take the restore step (host/role-start.ts), run an EngineWorker on
 * an OperatorHost, which restores it, serve /metrics, publish `tm.status` every second (worker-status.ts),
 * start a consumer per owned partition, and follow the NATS connection. `close()` stops reading
 * and writes a final checkpoint.
 */
import type { Server } from "node:http";
import { jetstream } from "@nats-io/jetstream";
import { pino, type Logger } from "pino";
import { Gauge, Histogram, type Registry } from "prom-client";
import type { StreamCore } from "../../core/types.js";
import type { EngineConfig } from "../config/config.js";
import { checkRetention } from "../host/engine-connect.js";
import { connectAndRestore } from "../host/role-start.js";
import { followStarts, publishAck } from "../checkpoint/checkpoint-notices.js";
import { EngineMetrics } from "../status/engine-metrics.js";
import { registerBackpressureMetrics } from "../status/backpressure-metrics.js";
import { announceWaits } from "../checkpoint/checkpoint-waits.js";
import { EngineWorker } from "./engine-worker.js";
import { OperatorHost } from "../host/operator-host.js";
import { paneSink } from "../host/open-sink.js";
import { InboxAcks } from "../../nats/inbox-acks.js";
import { runRole, type RunningRole } from "../host/role-lifecycle.js";
import { StatusPublisher } from "./worker-status.js";

import type { CoreFactory, CutPlanner } from "../checkpoint/restore-plan.js";
import { planWorkerCut } from "../checkpoint/worker-cut.js";
import type { WorkerState } from "../checkpoint/worker-state.js";
import { workerStateFrame } from "../checkpoint/state-frames.js";

export type { CoreFactory };

export interface RunningEngine extends RunningRole {
  readonly partitions: readonly number[];
  /** The host running the worker: output, gate, counts, stop (host/operator-host.ts). */
  readonly host: OperatorHost<EngineWorker>;
  readonly engine: EngineWorker;
}

export interface StartEngineOptions {
  /**
   * Defaults to the pure core (createCore / restoreCore), with session windows when
   * `config.sessions` is set (withSessions). A factory given here restores its own snapshots.
   */
  cores?: CoreFactory;
  logger?: Logger;
  /**
   * Publish panes from a pane publisher thread with its own connection instead of the main thread
   * (docs/decisions/0017-engine-throughput.md: measured slower on a busy two-core machine, so not
   * the default); the benchmark compares the two.
   */
  paneThread?: boolean;
}

const PREFERRED_METRICS_PORT = 9464;

export async function startEngine(config: EngineConfig, opts: StartEngineOptions = {}): Promise<RunningEngine> {
  const log = opts.logger ?? pino({ name: "tidemark-engine", base: { worker: config.worker } }, pino.destination(2));
  const planCut: CutPlanner<WorkerState> = (factory, check, completed) =>
    planWorkerCut(config, factory, check, log, completed);
  const {
    nc,
    store,
    loaded,
    cores,
    restored,
    epoch: restore,
  } = await connectAndRestore(config, opts.cores, workerStateFrame, log, planCut);
  await checkRetention(nc, restored?.state.offsets ?? [], log);
  const { epoch } = restore;
  const sink = paneSink(config, nc, log, opts.paneThread === true);
  const hostOpts = {
    log,
    compressPanes: config.compressPanes,
    compressOffThread: true,
    store,
    owner: { partitionCount: config.partitionCount, partitions: config.partitions, epoch },
    restored,
  };
  const host = new OperatorHost(
    sink,
    hostOpts,
    (ctx) => new EngineWorker(config, cores, jetstream(nc), ctx, new InboxAcks(nc), epoch),
  );
  const worker = host.operator;
  const core = worker.core; // restored by the host, whose status and metrics read it from here on
  const served = await serveMetrics(config, host, core, loaded.skipped.length, log);
  const status = new StatusPublisher(config, host, core, nc, log);
  followStarts(nc, (s) => worker.requestBarrier(s.n, s.startedAt), log);
  const waits = announceWaits(nc, config.worker, config.checkpointTimeoutMs, () => host.checkpointWaiting(), log);
  const startDelay = new Histogram({
    name: "tidemark_engine_checkpoint_start_delay_seconds",
    help: "Wall time from an aligned checkpoint's start notice to this worker's cut (Flink's checkpointStartDelay).",
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [served.registry],
  });
  worker.trigger.onBarrierCheckpoint = (a) => {
    startDelay.observe(a.startDelayMs / 1000);
    publishAck(nc, { operator: config.worker, ...a }, log);
  };
  const words = {
    waiting: "the partitions wait for the reconnect",
    consumers: "the consumers",
    fields: { partitions: config.partitions },
  };
  const run = { role: "engine" as const, config, loaded, epoch, served, tasks: [waits, status], words };
  const running = runRole(run, nc, host, status, log);
  return { ...running, partitions: config.partitions, host, engine: worker };
}

/** /metrics on the configured port, else 9464 when free, else any. */
async function serveMetrics(
  config: EngineConfig,
  host: OperatorHost<EngineWorker>,
  core: StreamCore,
  corruptCheckpoints: number,
  log: Logger,
): Promise<{ server: Server; port: number; registry: Registry }> {
  const worker = host.operator;
  const metrics = new EngineMetrics(
    {
      eventsTotal: () => host.eventsTotal,
      panesEmitted: () => host.panesEmitted,
      status: () => core.status(),
      partitions: () => config.partitions,
      pipelineLag: () => host.pipelineLag,
      partialsTotal: () => worker.partialsTotal,
    },
    { worker: config.worker },
  );
  metrics.checkpointsCorrupt.inc(corruptCheckpoints);
  registerBackpressureMetrics(metrics.registry, "tidemark_engine_", host);
  new Gauge({
    name: "tidemark_engine_input_queued_events",
    help: "Events read from the owned partition and not yet handed to the core (bounded by engine.maxQueuedEvents).",
    labelNames: ["partition"],
    registers: [metrics.registry],
    collect() {
      this.reset();
      config.partitions.forEach((partition, lane) =>
        this.set({ partition: String(partition) }, worker.interleave.queuedEvents(lane)),
      );
    },
  });
  host.checkpoints.onCheckpoint = (e) => {
    metrics.checkpointWritten(e.totalMs / 1000, e.bytes, e.pauseMs / 1000);
    log.info(e, "checkpoint written");
  };
  const port = config.metricsPort ?? (await preferred(config.metricsHost));
  return { ...(await metrics.serve(config.metricsHost, port)), registry: metrics.registry };
}

async function preferred(host: string): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(0));
    srv.listen(PREFERRED_METRICS_PORT, host, () => srv.close(() => resolve(PREFERRED_METRICS_PORT)));
  });
}
