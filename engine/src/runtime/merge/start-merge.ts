/**
 * `startMerge(config)`: the merge role (docs/operations.md, "Merge stage";
 * docs/decisions/0029-two-stage-dataflow.md), in the engine's steps: restore the newest valid
 * checkpoint (a merge operator's, refusing a worker's), connect and check the streams, serve
 * /metrics (`tidemark_merge_*`), publish `tm.status`, read TM_PARTIALS, follow the connection.
 * `close()` stops reading and writes a final checkpoint.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Server } from "node:http";
import { jetstream } from "@nats-io/jetstream";
import { redactUrl } from "../../nats/connect-options.js";
import { Counter, Gauge, Histogram } from "prom-client";
import { pino, type Logger } from "pino";
import { createCore, restoreCore } from "../../core/index.js";
import type { StreamCore } from "../../core/types.js";
import { connectEngine } from "../host/engine-connect.js";
import { CheckpointFollower } from "../checkpoint/checkpoint-follower.js";
import { lastComplete } from "../checkpoint/checkpoint-notices.js";
import { EngineMetrics } from "../status/engine-metrics.js";
import { restoreEngine } from "../checkpoint/engine-restore.js";
import { RuntimeError } from "../errors.js";
import type { MergeConfig } from "../config/merge-config.js";
import { CheckpointCoordinator } from "../checkpoint/checkpoint-coordinator.js";
import { MergeOperator } from "./merge-operator.js";
import { MergeStatusPublisher } from "../status/merge-status.js";
import { registerBackpressureMetrics } from "../status/backpressure-metrics.js";
import { announceWaits } from "../checkpoint/checkpoint-waits.js";
import { paneSink } from "../worker/start-engine.js";
import { closeConnections } from "../host/role-shutdown.js";

export interface RunningMerge {
  readonly worker: string;
  readonly metricsUrl: string;
  readonly restoredFrom: string | undefined;
  readonly skippedCheckpoints: ReadonlyArray<{ file: string; reason: string }>;
  readonly operator: MergeOperator;
  readonly status: MergeStatusPublisher;
  close(): Promise<void>;
}

export async function startMerge(config: MergeConfig, opts: { logger?: Logger } = {}): Promise<RunningMerge> {
  const log = opts.logger ?? pino({ name: "tidemark-merge", base: { worker: config.worker } }, pino.destination(2));
  const nc = await connectEngine(config);
  const complete = await lastComplete(nc);
  const cores = { create: createCore, restore: restoreCore };
  const { store, loaded, core } = await restoreEngine(config, cores, log, complete?.operators[config.worker]).catch(
    async (err: unknown) => {
      await nc.close();
      throw err;
    },
  );
  const cp = loaded.checkpoint;
  if (cp && cp.header.merge === undefined) {
    await nc.close();
    throw new RuntimeError(
      "TM_CHECKPOINT_MISMATCH",
      `checkpoint ${loaded.file} was written by an engine worker, not a merge operator: ` +
        `give the merge operator its own id (--worker) or --data directory`,
    );
  }
  const sink = paneSink(config, nc, log, false);
  const op = new MergeOperator(config, core, store, jetstream(nc), sink, log, cp?.header);
  const metrics = mergeMetrics(config, op, core);
  metrics.checkpointsCorrupt.inc(loaded.skipped.length);
  registerBackpressureMetrics(metrics.registry, "tidemark_merge_", op);
  op.onCheckpoint = (e) => {
    metrics.checkpointWritten(e.totalMs / 1000, e.bytes, e.pauseMs / 1000);
    log.info(e, "checkpoint written");
  };
  const served = await metrics.serve(config.metricsHost, config.metricsPort ?? 0);
  const checkpoints =
    config.mergePartition === 0 ? await coordinate(config, op, nc, metrics, log) : follow(config, op, nc, metrics, log);
  const waits = announceWaits(nc, config.worker, config.checkpointTimeoutMs, () => op.checkpointWaiting(), log);
  const status = new MergeStatusPublisher(config, op, core, nc, log, checkpoints);
  status.start();
  op.start();
  void followConnection(nc, op, status, log);
  // Credentials in the NATS URL are never logged (docs/security.md).
  log.info(
    {
      partitionCount: config.partitionCount,
      metrics: served.port,
      nats: redactUrl(config.natsUrl),
    },
    "merge started",
  );
  let closing: Promise<void> | undefined;
  return {
    worker: config.worker,
    metricsUrl: `http://${config.metricsHost}:${served.port}/metrics`,
    restoredFrom: loaded.file,
    skippedCheckpoints: loaded.skipped,
    operator: op,
    status,
    close: () => (closing ??= (waits.stop(), closeMerge(op, status, checkpoints, nc, served.server, log))),
  };
}

/** The engine's metrics under tidemark_merge_, and the merge stage's own. */
function mergeMetrics(config: MergeConfig, op: MergeOperator, core: StreamCore): EngineMetrics {
  const metrics = new EngineMetrics(
    {
      eventsTotal: () => op.eventsTotal,
      panesEmitted: () => op.output.panesEmitted,
      status: () => core.status(),
      partitions: () => config.partitions,
      pipelineLag: () => op.output.pipelineLag,
    },
    { worker: config.worker },
    "tidemark_merge_",
  );
  const registers = [metrics.registry];
  new Counter({
    name: "tidemark_merge_partial_batches_total",
    help: "TM_PARTIALS messages handled, by outcome (malformed and overlap: refused, never merged).",
    labelNames: ["outcome"],
    registers,
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(op.batches)) this.inc({ outcome }, n);
    },
  });
  const alignment = new Histogram({
    name: "tidemark_merge_tick_alignment_seconds",
    help: "Wall time from a tick's first partial batch to its release, once every partition reported past it.",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  op.output.onTickAligned = (ms) => alignment.observe(ms / 1000);
  new Gauge({
    name: "tidemark_merge_waiting_ticks",
    help: "Ticks of partials held until every partition has reported past them (a slower worker).",
    registers,
    collect() {
      this.set(op.aligner.waiting);
    },
  });
  new Gauge({
    name: "tidemark_merge_held_back_seconds",
    help: "Log time between the furthest partition reported and the one holding the merged watermark back.",
    registers,
    collect() {
      const held = op.aligner.heldBackBy();
      const furthest = op.aligner.furthest;
      this.set(held?.reportedTo != null && furthest !== null ? (furthest - held.reportedTo) / 1000 : 0);
    },
  });
  return metrics;
}

/** The histograms of aligned checkpoints every merge operator exports. */
function checkpointHistograms(metrics: EngineMetrics): { alignment: Histogram; startDelay: Histogram } {
  const registers = [metrics.registry];
  const buckets = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
  const alignment = new Histogram({
    name: "tidemark_merge_checkpoint_alignment_seconds",
    help: "Wall time from the first barrier of an aligned checkpoint to the last (Flink's checkpointAlignmentTime).",
    buckets,
    registers,
  });
  const startDelay = new Histogram({
    name: "tidemark_merge_checkpoint_start_delay_seconds",
    help: "Wall time from a checkpoint's start notice to its first barrier at the merge operator (Flink's checkpointStartDelay).",
    buckets,
    registers,
  });
  return { alignment, startDelay };
}

/** ADR 0031: the coordinator in this process (merge partition 0), wired to the operator's alignment, with its metrics. */
async function coordinate(
  config: MergeConfig,
  op: MergeOperator,
  nc: NatsConnection,
  metrics: EngineMetrics,
  log: Logger,
): Promise<CheckpointCoordinator> {
  const c = new CheckpointCoordinator(
    nc,
    {
      operator: config.worker,
      everyMs: config.checkpointEveryMs,
      timeoutMs: config.checkpointTimeoutMs,
      mergePartitions: config.mergePartitions,
      // Held by backpressure itself, or waiting for its own acks: progress, not a stall (ADR 0035).
      held: () => op.gate.hold.current() !== null || op.checkpointWaiting() !== null,
    },
    log,
  );
  const { alignment, startDelay } = checkpointHistograms(metrics);
  new Counter({
    name: "tidemark_merge_checkpoints_total",
    help: "Aligned checkpoints coordinated, by outcome (completed: every operator's is durable; aborted: timed out).",
    labelNames: ["outcome"],
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.inc({ outcome: "completed" }, c.completed);
      this.inc({ outcome: "aborted" }, c.aborted);
    },
  });
  op.onBarrierSeen = (n) => c.barrierSeen(n);
  op.onCheckpointAligned = (n, file, ms, workers) => {
    alignment.observe(ms / 1000);
    c.mergeAligned(n, file, ms, workers);
  };
  c.onStartDelay = (ms) => startDelay.observe(ms / 1000);
  c.onAbort = (n) => op.giveUp(n);
  op.onAlignmentDeclined = (n, why) => c.decline(n, why);
  c.onComplete = (done) => log.info(done, `checkpoint ${done.n} complete`);
  await c.start();
  return c;
}

/** ADR 0033: a merge operator of partition ≥ 1 follows the coordinator, with the same histograms. */
function follow(
  config: MergeConfig,
  op: MergeOperator,
  nc: NatsConnection,
  metrics: EngineMetrics,
  log: Logger,
): CheckpointFollower {
  const { alignment, startDelay } = checkpointHistograms(metrics);
  const observe = {
    alignment: (ms: number) => alignment.observe(ms / 1000),
    startDelay: (ms: number) => startDelay.observe(ms / 1000),
  };
  return new CheckpointFollower(config, op, nc, observe, log);
}

async function followConnection(
  nc: NatsConnection,
  op: MergeOperator,
  status: MergeStatusPublisher,
  log: Logger,
): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === "disconnect") log.warn({ server: s.server }, "disconnected from NATS; waiting for the reconnect");
    else if (s.type === "reconnect") {
      log.info({ server: s.server }, "reconnected to NATS; recreating the consumer");
      op.connectionRestored();
      status.reconnected();
    }
  }
}

async function closeMerge(
  op: MergeOperator,
  status: MergeStatusPublisher,
  checkpoints: { stop(): void },
  nc: NatsConnection,
  metricsServer: Server,
  log: Logger,
): Promise<void> {
  checkpoints.stop();
  status.stop();
  await op.close();
  status.publish();
  await closeConnections(nc, metricsServer);
  log.info({ events: op.eventsTotal }, "merge stopped");
  log.flush?.();
}
