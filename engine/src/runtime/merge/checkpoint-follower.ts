/**
 * CheckpointFollower: the aligned-checkpoint side of a merge operator of merge partition ≥ 1
 * (docs/decisions/0033-merge-partitions.md). The coordinator runs in merge partition 0; this one
 * follows its start, complete and abort notices on TM_CHECKPOINTS, acknowledges each checkpoint
 * its operator aligned with the workers it aligned (the coordinator completes n once every merge
 * partition and each of those workers has), gives an aborted alignment up, and keeps what the
 * operator's `tm.status` says of the checkpoints.
 *
 * Invariant: at most one checkpoint is in flight (the coordinator's), so one start time and one
 * start delay are kept, those of the newest start notice.
 */
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { SUBJECT_CHECKPOINT_ABORT, SUBJECT_CHECKPOINT_COMPLETE } from "../../protocol.js";
import { followStarts, publishAck } from "../checkpoint/checkpoint-notices.js";
import type { OperatorLog } from "../operator-log.js";
import type { MergeConfig } from "../config/merge-config.js";
import type { MergeOperator } from "./merge-operator.js";
import type { CheckpointProgress } from "./merge-status.js";

export interface FollowerMetrics {
  /** Wall ms from the first barrier n to the last (checkpointAlignmentTime). */
  alignment(ms: number): void;
  /** Wall ms from the start notice to the first barrier n here (checkpointStartDelay). */
  startDelay(ms: number): void;
}

export class CheckpointFollower implements CheckpointProgress {
  current: number | null = null;
  lastCompleted: { n: number } | null = null;
  completed = 0;
  aborted = 0;
  /** The newest start notice, and the wall ms from it to the first barrier of its n here. */
  private started: { n: number; at: number; delayMs: number | null } | null = null;
  private readonly subs: Subscription[];

  constructor(
    private readonly config: MergeConfig,
    private readonly op: MergeOperator,
    private readonly nc: NatsConnection,
    private readonly metrics: FollowerMetrics,
    private readonly log: OperatorLog,
  ) {
    op.onBarrierSeen = (n) => this.barrierSeen(n);
    op.onCheckpointAligned = (n, file, ms, workers) => this.aligned(n, file, ms, workers);
    this.subs = [
      followStarts(nc, (s) => (this.started = { n: (this.current = s.n), at: s.startedAt, delayMs: null }), log),
      ...[SUBJECT_CHECKPOINT_COMPLETE, SUBJECT_CHECKPOINT_ABORT].map((subject) =>
        nc.subscribe(subject, { callback: (_err, m) => this.ended(subject, noticeN(m.string())) }),
      ),
    ];
  }

  stop(): void {
    for (const s of this.subs) s.unsubscribe();
  }

  private barrierSeen(n: number): void {
    const s = this.started;
    if (s?.n !== n || s.delayMs !== null) return;
    s.delayMs = Date.now() - s.at;
    this.metrics.startDelay(s.delayMs);
  }

  private aligned(n: number, file: string, alignmentMs: number, workers: string[]): void {
    this.metrics.alignment(alignmentMs);
    const startDelayMs = this.started?.n === n ? (this.started.delayMs ?? 0) : 0;
    const merge = { partition: this.config.mergePartition, workers, alignmentMs };
    publishAck(this.nc, { operator: this.config.worker, n, file, startDelayMs, merge }, this.log);
  }

  /** The coordinator completed or aborted n, heard as it is stored. */
  private ended(subject: string, n: number | null): void {
    if (n === null) return void this.log.warn({ subject }, "checkpoint notice not understood; ignored");
    if (this.current === n) this.current = null;
    if (subject === SUBJECT_CHECKPOINT_COMPLETE) {
      this.completed++;
      this.lastCompleted = { n };
    } else {
      this.aborted++;
      this.op.giveUp(n);
    }
  }
}

/** The checkpoint number of a notice body, null when it has none. */
function noticeN(text: string): number | null {
  try {
    const n = Number((JSON.parse(text) as { n?: unknown } | null)?.n);
    return Number.isSafeInteger(n) ? n : null;
  } catch {
    return null;
  }
}
