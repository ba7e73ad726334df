/**
 * Publishes a merge operator's `tm.status` every `statusEvery` (docs/operations.md, "Merge stage"):
 * the same message as a worker's (status-message.ts) over every TM_EVENTS partition, each
 * partition's `logTime` the end its upstream worker reported, plus `merge` (protocol.ts,
 * MergeStageStatus). `heldBackBy` names the partition holding the merged watermark back, and
 * `merge.heldBackByWorker` its worker, once it is HOLD_MS of log time behind the furthest partition
 * or has not moved for HOLD_MS of wall time (shorter gaps are the rhythm of 100 ms ticks arriving
 * from several workers), or, while a checkpoint is aligned, once its barrier has been awaited for
 * HOLD_MS (ADR 0031); a partition that stays so for STALL_MS is logged, naming the worker.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { StreamCore } from "../../core/types.js";
import { SUBJECT_STATUS, type EngineStatusMessage } from "../../protocol.js";
import type { MergeConfig } from "../config/merge-config.js";
import type { MergeOperator } from "./merge-operator.js";
import type { OperatorHost } from "../host/operator-host.js";
import { HOLD_MS, StallWatch, STALL_MS } from "../status/stall-watch.js";
import { buildStatusMessage } from "../status/status-message.js";
import { backpressureStatus } from "../status/backpressure-status.js";
import { HoldLog } from "../status/hold-log.js";

/** What the status says of the aligned checkpoints: the coordinator's, or what another merge operator heard of them. */
export interface CheckpointProgress {
  readonly current: number | null;
  readonly lastCompleted: { n: number } | null;
  readonly completed: number;
  readonly aborted: number;
}

interface HeldBack {
  partition: number;
  worker: string | null;
  reportedTo: number | null;
  /** Its barrier is awaited by the checkpoint being aligned. */
  barrier?: boolean;
}

export class MergeStatusPublisher {
  private readonly stalls: StallWatch;
  private readonly holds: HoldLog;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: MergeConfig,
    private readonly host: OperatorHost<MergeOperator>,
    private readonly core: StreamCore,
    private readonly nc: NatsConnection,
    private readonly log: Logger,
    private readonly coordinator?: CheckpointProgress,
  ) {
    this.stalls = new StallWatch(config.partitionCount, Date.now());
    this.holds = new HoldLog(host, log);
  }

  start(): void {
    this.timer = setInterval(() => this.publish(), this.config.statusEveryMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  reconnected(): void {
    this.stalls.restart(Date.now());
  }

  /** The status as it stands (published by `publish`). */
  message(now: number): EngineStatusMessage {
    const { config, host } = this;
    const op = host.operator;
    const laneTimes = config.partitions.map((p) => op.aligner.reportedEnd(p));
    const held = this.heldBack(now);
    const stalled = this.stalls.observe(held?.partition ?? null, laneTimes, now);
    if (stalled !== null) this.reportStall(stalled, held?.worker ?? null);
    this.holds.observe(now);
    const furthest = op.aligner.furthest;
    // An awaited barrier has held the checkpoint for HOLD_MS already: named at once.
    const behind =
      held !== null &&
      (held.barrier === true || (furthest !== null && furthest - (held.reportedTo ?? -Infinity) >= HOLD_MS));
    const waitingFor = behind ? held.partition : this.stalls.holding(held?.partition ?? null, now);
    const msg = buildStatusMessage({
      worker: config.worker,
      wallTime: now,
      core: this.core.status(),
      policies: config.core.policies,
      partitions: config.partitions,
      laneTimes,
      waitingFor,
      offsets: [],
      lastCheckpointWall: op.lastCheckpointWall,
      eventsTotal: host.eventsTotal,
      pipelineLag: host.pipelineLag.percentiles(now),
      backpressure: backpressureStatus(host),
    });
    const named = waitingFor !== null && msg.heldBackBy === waitingFor;
    return {
      ...msg,
      heldBackBy: named ? waitingFor : null,
      merge: {
        heldBackByWorker: named ? (held?.worker ?? null) : null,
        waitingTicks: op.aligner.waiting,
        batches: { ...op.batches },
        checkpoints: {
          inFlight: this.coordinator?.current ?? null,
          lastCompleted: this.coordinator?.lastCompleted?.n ?? null,
          aligning: op.alignment.aligning,
          held: op.alignment.heldCount,
          completed: this.coordinator?.completed ?? 0,
          aborted: this.coordinator?.aborted ?? 0,
        },
      },
    };
  }

  /**
   * What holds the merge back: while a checkpoint is aligned, the first partition whose barrier
   * is awaited (the others' partials are held for it, ADR 0031); else the tick aligner's slowest.
   */
  private heldBack(now: number): HeldBack | null {
    const { alignment, aligner, unheard } = this.host.operator;
    const since = alignment.since;
    const p = alignment.missing(unheard);
    if (since === null || p === null || now - since < HOLD_MS) return aligner.heldBackBy();
    return { partition: p, worker: aligner.reportedBy(p), reportedTo: null, barrier: true };
  }

  publish(): void {
    const msg = this.message(Date.now());
    if (this.nc.isClosed()) return;
    try {
      this.nc.publish(SUBJECT_STATUS, JSON.stringify(msg));
    } catch (err) {
      this.log.error({ err: (err as Error).message }, "merge status not published");
    }
  }

  private reportStall(partition: number, worker: string | null): void {
    this.log.warn(
      { partition, worker },
      `partition ${partition} (worker ${worker ?? "never heard of"}) has reported no partials for ${STALL_MS / 1000} s ` +
        `and holds the merged watermark back: check that worker; after the idle timeout it is left out`,
    );
  }
}
