/**
 * `startMerge(config)`: the merge role (docs/operations.md, "Merge stage";
 * docs/decisions/0029-two-stage-dataflow.md), in the engine's steps: restore the newest valid
 * checkpoint (a merge operator's, refusing a worker's), connect and check the streams, serve
 * /metrics (`tidemark_merge_*`), publish `tm.status`, read TM_PARTIALS, follow the connection.
 * `close()` stops reading and writes a final checkpoint.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { Counter, Gauge, Histogram } from "prom-client";
import { pino, type Logger } from "pino";
import { createCore, restoreCore } from "../../core/index.js";
import type { StreamCore } from "../../core/types.js";
import { connectAndRestore } from "../host/role-start.js";
import { CheckpointFollower } from "./checkpoint-follower.js";
import { EngineMetrics } from "../status/engine-metrics.js";
import type { MergeConfig } from "../config/merge-config.js";
import { CheckpointCoordinator } from "../checkpoint/checkpoint-coordinator.js";
import { mergeStateFrame } from "../checkpoint/state-frames.js";
import type { CutPlanner } from "../checkpoint/restore-plan.js";
import { planMergeCut } from "../checkpoint/merge-cut.js";
import type { MergeState } from "../checkpoint/merge-state.js";
import { MergeOperator } from "./merge-operator.js";
import { MergeStatusPublisher } from "./merge-status.js";
import { registerBackpressureMetrics } from "../status/backpressure-metrics.js";
import { announceWaits } from "../checkpoint/checkpoint-waits.js";
import { paneSink } from "../host/open-sink.js";
import { OperatorHost } from "../host/operator-host.js";
import { runRole, type RunningRole } from "../host/role-lifecycle.js";

export interface RunningMerge extends RunningRole {
  /** The host running the operator: output, gate, counts, stop (host/operator-host.ts). */
  readonly host: OperatorHost<MergeOperator>;
  readonly operator: MergeOperator;
  readonly status: MergeStatusPublisher;
}

export async function startMerge(config: MergeConfig, opts: { logger?: Logger } = {}): Promise<RunningMerge> {
  const log = opts.logger ?? pino({ name: "tidemark-merge", base: { worker: config.worker } }, pino.destination(2));
  const cores = { create: createCore, restore: restoreCore };
  // A worker's checkpoint is refused here, by the merge operator's StateFrame (checkpoint/state-frames.ts).
  const planCut: CutPlanner<MergeState> = (factory) => planMergeCut(config, factory, log);
  const {
    nc,
    store,
    loaded,
    restored,
    epoch: restore,
  } = await connectAndRestore(config, cores, mergeStateFrame, log, planCut);
  const { epoch } = restore;
  const sink = paneSink(config, nc, log, false);
  const owner = { partitionCount: config.partitionCount, partitions: config.partitions, epoch };
  const hostOpts = { log, compressPanes: config.compressPanes, store, owner, restored };
  const host = new OperatorHost(sink, hostOpts, (ctx) => new MergeOperator(config, cores, jetstream(nc), ctx, restore));
  const op = host.operator;
  const core = op.core; // restored by the host, whose status and metrics read it from here on
  const metrics = mergeMetrics(config, host, core);
  metrics.checkpointsCorrupt.inc(loaded.skipped.length);
  registerBackpressureMetrics(metrics.registry, "tidemark_merge_", host);
  host.checkpoints.onCheckpoint = (e) => {
    metrics.checkpointWritten(e.totalMs / 1000, e.bytes, e.pauseMs / 1000);
    log.info(e, "checkpoint written");
  };
  const served = await metrics.serve(config.metricsHost, config.metricsPort ?? 0);
  const checkpoints =
    config.mergePartition === 0
      ? await coordinate(config, host, nc, metrics, log)
      : follow(config, op, nc, metrics, log);
  const waits = announceWaits(nc, config.worker, config.checkpointTimeoutMs, () => host.checkpointWaiting(), log);
  const status = new MergeStatusPublisher(config, host, core, nc, log, checkpoints);
  const words = {
    waiting: "waiting for the reconnect",
    consumers: "the consumer",
    fields: { partitionCount: config.partitionCount },
  };
  const run = { role: "merge" as const, config, loaded, epoch, served, tasks: [waits, checkpoints, status], words };
  const running = runRole(run, nc, host, status, log);
  return { ...running, host, operator: op, status };
}

/** The engine's metrics under tidemark_merge_, and the merge stage's own. */
function mergeMetrics(config: MergeConfig, host: OperatorHost<MergeOperator>, core: StreamCore): EngineMetrics {
  const op = host.operator;
  const metrics = new EngineMetrics(
    {
      eventsTotal: () => host.eventsTotal,
      panesEmitted: () => host.panesEmitted,
      status: () => core.status(),
      partitions: () => config.partitions,
      pipelineLag: () => host.pipelineLag,
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
  host: OperatorHost<MergeOperator>,
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
      held: () => host.gate.hold.current() !== null || host.checkpointWaiting() !== null,
    },
    log,
  );
  const op = host.operator;
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
