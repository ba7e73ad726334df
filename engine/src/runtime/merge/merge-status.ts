/**
 * Publishes a merge operator's `tm.status` every `statusEvery` (docs/operations.md, "Merge stage"):
 * the same message as a worker's (status-message.ts) over every TM_EVENTS partition, each
 * partition's `logTime` the end its upstream worker reported, plus `merge` (protocol.ts,
 * MergeStageStatus). `heldBackBy` names the partition holding the merged watermark back, and
 * `merge.heldBackByWorker` its worker, once it is HOLD_MS of log time behind the furthest partition
 * or has not moved for HOLD_MS of wall time (shorter gaps are the rhythm of 100 ms ticks arriving
 * from several workers), or, while a checkpoint is aligned, once its barrier has been awaited for
 * HOLD_MS (ADR 0031); a partition that stays so for STALL_MS is logged, naming the worker. The
 * timer, the reconnect and the publish are every role's (host/role-status.ts).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { StreamCore } from "../../core/types.js";
import type { EngineStatusMessage } from "../../protocol.js";
import type { MergeConfig } from "../config/merge-config.js";
import type { MergeOperator } from "./merge-operator.js";
import type { OperatorHost } from "../host/operator-host.js";
import { RoleStatusPublisher } from "../host/role-status.js";
import { HOLD_MS, STALL_MS } from "../status/stall-watch.js";

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

export class MergeStatusPublisher extends RoleStatusPublisher {
  constructor(
    private readonly config: MergeConfig,
    private readonly host: OperatorHost<MergeOperator>,
    core: StreamCore,
    nc: NatsConnection,
    log: Logger,
    private readonly coordinator?: CheckpointProgress,
  ) {
    super({ config, host, core }, nc, log, "merge");
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
    const msg = this.statusOf(now, {
      laneTimes,
      waitingFor,
      offsets: [],
      lastCheckpointWall: host.checkpoints.lastCheckpointWall,
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

  private reportStall(partition: number, worker: string | null): void {
    this.log.warn(
      { partition, worker },
      `partition ${partition} (worker ${worker ?? "never heard of"}) has reported no partials for ${STALL_MS / 1000} s ` +
        `and holds the merged watermark back: check that worker; after the idle timeout it is left out`,
    );
  }
}
