/**
 * MergeOperator: the merge stage's operator (docs/decisions/0029-two-stage-dataflow.md, "Runtime"),
 * run by an OperatorHost (host/operator-host.ts), which owns its input loop, the cut of its
 * checkpoints, its output, gate, counts and stop. Its input is its merge partition of TM_PARTIALS
 * in stream order from its own checkpointed sequence (input/partials-input.ts); it hands each
 * batch to the TickAligner (duplicates ignored, overlaps and malformed bodies counted and
 * refused), feeds the released ticks to the core and moves every partition's log time to the
 * aligner's bound, and publishes what the core emits to TM_PANES like a worker does.
 *
 * Invariant: what the core emits while one TM_PARTIALS message is handled goes out as one EmitGroup
 * keyed (−1 − merge partition, the message's sequence), whose message ids never meet a TM_EVENTS
 * partition's; a checkpoint is cut between two messages — the sequence, the aligner's state (with
 * the ticks it holds back) and the core's snapshot — and is durable only once the panes published
 * before it are acknowledged. So a restore replays the messages after the cut into the state at the
 * cut, and what it emits again carries the ids it had; only the idleness rule, judged on wall time,
 * can release a tick at another message than the first run did (its panes keep their ids and seqs).
 *
 * Aligned checkpoints (docs/decisions/0031-aligned-checkpoints.md): a barrier n of a worker holds
 * that worker's later messages (BarrierAlignment) until every partition's barrier n arrived; the
 * checkpoint n is cut then (the operator hands the host that cut), resuming at the first held
 * message, and the held messages are handled once its state is captured. Its own checkpoints are
 * due by its MergeTrigger (checkpoint/merge-trigger.ts). Its checkpointed state is a MergeState
 * (checkpoint/merge-state.ts): `handleCheckpoint` takes it with the core's snapshot, `restore` —
 * called by the host before the input starts — puts the same value back and takes the core made
 * from that snapshot instead of the fresh one it was built with. What it holds for an alignment is bounded (maxAlignmentBytes): past
 * it the alignment of n is given up, as Flink once declined a checkpoint whose alignment buffered too
 * much, rather than holding the input (which would also hold the barrier awaited) or memory
 * (docs/decisions/0035-backpressure.md, "Aligned checkpoints").
 *
 * Held input: while its pane sink is saturated the host pulls no further (its OutputGate).
 */
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { snapshotStepsOf } from "../../core/snapshot/snapshot-steps.js";
import { TickAligner } from "../../core/partials/tick-aligner.js";
import { Silence } from "../../core/watermarks/silence.js";
import type { StreamCore } from "../../core/types.js";
import type { CoreFactory } from "../checkpoint/restore-plan.js";
import {
  BARRIER_HEADER,
  decodePartialMessage,
  parseBarrier,
  PartialBatchError,
  partialsSubject,
  STREAM_PARTIALS,
  type PartialBatch,
} from "../../protocol.js";
import { coreAggregates } from "../../core/create-core.js";
import { BarrierAlignment, type Aligned } from "../checkpoint/barrier-alignment.js";
import type { CutPlan } from "../checkpoint/checkpoint-trigger.js";
import { MergeTrigger } from "../checkpoint/merge-trigger.js";
import type { MergeConfig } from "../config/merge-config.js";
import type { HostContext, Operator, OperatorCheckpoint, OperatorOutput } from "../host/operator.js";
import { PartialsInput } from "../input/partials-input.js";
import { MergeRelease } from "./merge-release.js";
import type { MergeState } from "../checkpoint/merge-state.js";
import { mergeStateFrame, type Restored } from "../checkpoint/state-frames.js";
import { ownKeys } from "./merge-keys.js";
import { MergeGroups } from "../../core/grouped/merge-groups.js";
import type { RestoreEpoch } from "../checkpoint/restore-epoch.js";

export type BatchOutcome = "accepted" | "duplicate" | "overlap" | "malformed" | "mismatch" | "stale";

/** A message held during a barrier alignment. */
interface Held {
  b: PartialBatch;
  seq: number;
  /** Its place in its message's run (0: first, or alone): its panes' ids are its own (EmitGroup `part`). */
  part: number;
  /** Its body's bytes (what the alignment bound counts). */
  bytes: number;
}

/** An aligned cut: the messages its alignment held, handled once its state is captured. */
interface AlignedCut extends CutPlan {
  aligned?: Aligned<Held>;
}

/** The progress timer's period, and the EmitGroup number of what it releases (below any message's, −1 − merge partition). */
const TIMER_MS = 1_000;
const TIMER_GROUP = -1_000_000;

export class MergeOperator implements Operator<JsMsg, MergeState> {
  readonly operatorId: string;
  /** None of its own beside the host's pane sink. */
  readonly outputs: readonly OperatorOutput[] = [];
  readonly aligner: TickAligner;
  /** The ticks released through the core, and what it emits (records merged, panes, lag). */
  readonly output: MergeRelease;
  readonly batches: Record<BatchOutcome, number> = {
    accepted: 0,
    duplicate: 0,
    overlap: 0,
    malformed: 0,
    mismatch: 0,
    stale: 0,
  };
  readonly input: PartialsInput;
  readonly trigger: MergeTrigger;
  readonly stateFrame = mergeStateFrame;
  readonly progressEveryMs = TIMER_MS;
  readonly alignment: BarrierAlignment<Held>;
  /** A barrier of n arrived (the coordinator's start delay). */
  onBarrierSeen: (n: number) => void = () => undefined;
  /** Checkpoint n aligned and durable here. */
  onCheckpointAligned: (n: number, file: string, alignmentMs: number, workers: string[]) => void = () => undefined;
  /** The alignment of n was given up here: it held more than maxAlignmentBytes. */
  onAlignmentDeclined: (n: number, why: string) => void = () => undefined;

  private seq = 0;
  private mergeCore: StreamCore;
  /** Its core when made of old merge partitions' (merge-groups.ts), else null. */
  private groups: MergeGroups | null = null;
  private readonly clock: () => number;
  private readonly log: HostContext["log"];
  private readonly mismatchedWorkers = new Set<string>();
  /** Per partition: wall clock of its last batch or barrier, held or not (alignment's idleness). */
  private readonly heardAt: Silence;
  /**
   * A partition unheard of for the idle timeout counts as aligned: its worker is left out of the
   * checkpoint, as the tick aligner leaves it out of the watermark (ADR 0031). The tick aligner's
   * own rule cannot serve: while the others' batches are held it sees no one ahead of it.
   */
  readonly unheard = (p: number): boolean => this.heardAt.silent(p, this.clock(), this.config.idleTimeoutMs);

  constructor(
    private readonly config: MergeConfig,
    /** Its fresh core (a restore brings the core of the cut instead). */
    cores: CoreFactory,
    js: JetStreamClient,
    private readonly host: HostContext,
    /**
     * Its restore epoch (docs/decisions/0057-elastic-workers.md): barriers of an earlier one are
     * ignored, and so are its batches reporting past the cut of the savepoint that began this one.
     */
    private readonly restoreEpoch: RestoreEpoch = { epoch: 0 },
  ) {
    this.operatorId = config.worker;
    const clock = (this.clock = host.clock);
    const log = (this.log = host.log);
    this.mergeCore = ownKeys(cores.create(config.core), config);
    this.aligner = new TickAligner(config.partitionCount, coreAggregates(config.core), config.idleTimeoutMs);
    this.alignment = new BarrierAlignment(config.partitionCount);
    this.heardAt = new Silence(config.partitionCount, clock());
    this.output = new MergeRelease(this.aligner, () => this.mergeCore, config.partitionCount, host, null);
    const problem = (what: string, err: unknown): void =>
      log.warn({ err: err instanceof Error ? err.message : err }, what);
    const subject = partialsSubject(config.mergePartition);
    this.input = new PartialsInput(js, STREAM_PARTIALS, subject, () => this.seq, problem);
    this.trigger = new MergeTrigger(config, () => this.alignment.aligning !== null, clock);
  }

  /** Records merged (the events the partials stand for). */
  get eventsTotal(): number {
    return this.output.eventsTotal;
  }

  /** One TM_PARTIALS message: a partial batch or a barrier. */
  processBatch(m: JsMsg): number {
    this.onMessage(m);
    return 1;
  }

  logTime(): number | null {
    return this.output.logTime;
  }

  /** The coordinator gave checkpoint n up: what was held for it is handled now. */
  giveUp(n: number): void {
    if (this.alignment.aligning !== n) return;
    for (const h of this.alignment.giveUp()) this.handle(h);
  }

  /**
   * A batch, or a run of them (docs/decisions/0054-partial-runs.md): a run's batches are handled in
   * its order as separate messages would be, except that a checkpoint alignment they complete is
   * cut only after the last, since the cut resumes after this message.
   */
  private onMessage(m: JsMsg): void {
    const barrier = m.headers?.get(BARRIER_HEADER);
    if (barrier) return this.onBarrier(m, barrier);
    let batches: PartialBatch[];
    try {
      batches = decodePartialMessage(m.data);
    } catch (err) {
      if (!(err instanceof PartialBatchError)) throw err;
      this.batches.malformed++;
      this.log.warn({ seq: m.seq, code: err.code, field: err.field, err: err.message }, "partial batch refused");
      this.seq = m.seq;
      return;
    }
    this.seq = m.seq;
    const bytes = m.data.byteLength / batches.length;
    batches.forEach((b, part) => {
      if (this.isStale(b)) this.batches.stale++;
      else if ((b.mergePartitions ?? 1) !== this.config.mergePartitions) this.mismatched(b, m.seq);
      else this.handle({ b, seq: m.seq, part, bytes }, false);
    });
    if (this.alignment.completeWith(this.unheard)) this.alignedCheckpoint();
  }

  /** Of an older epoch, and reporting past the savepoint's cut for one of its partitions (restored workers publish that again). */
  private isStale(b: PartialBatch): boolean {
    if ((b.epoch ?? 0) >= this.restoreEpoch.epoch) return false;
    const cut = this.restoreEpoch.cutTo ?? {};
    return b.partitions.some((p) => {
      const to = cut[String(p)];
      return to === undefined || to === null || b.to > to;
    });
  }

  /** A batch cut for another mergePartitions (ADR 0033): refused and counted, logged once per worker. */
  private mismatched(b: PartialBatch, seq: number): void {
    this.batches.mismatch++;
    if (this.mismatchedWorkers.has(b.worker)) return;
    this.mismatchedWorkers.add(b.worker);
    this.log.warn(
      { seq, worker: b.worker, theirs: b.mergePartitions ?? 1, ours: this.config.mergePartitions },
      "partial batches refused: the worker cuts them for another mergePartitions; give every worker and merge operator the same",
    );
  }

  private onBarrier(m: JsMsg, header: string): void {
    this.seq = m.seq;
    const body = parseBarrier(m.string(), header);
    if (body === null) {
      this.batches.malformed++;
      this.log.warn({ seq: m.seq, header }, "barrier refused: not a checkpoint barrier");
      return;
    }
    if ((body.epoch ?? 0) < this.restoreEpoch.epoch) {
      this.batches.stale++;
      return;
    }
    this.onBarrierSeen(body.n);
    const now = this.heard(body.partitions);
    const r = this.alignment.barrier(body, now, this.unheard);
    for (const h of r.released) this.handle(h);
    if (r.outcome === "aligned") this.alignedCheckpoint();
  }

  /** Every partition's barrier n is in: the host cuts checkpoint n now, then the held messages are handled. */
  private alignedCheckpoint(): void {
    const a = this.alignment.take();
    this.trigger.aligned(this.clock());
    const plan: AlignedCut = {
      barrier: a.n,
      aligned: a,
      captured: () => {
        for (const h of a.held) this.handle(h);
      },
      durable: (file) => this.onCheckpointAligned(a.n, file, a.alignmentMs, a.workers),
      failure: "aligned checkpoint failed",
    };
    this.host.cut(plan);
  }

  /** Its partitions were heard of now (a batch or a barrier, held or not); returns now. */
  private heard(partitions: readonly number[]): number {
    const now = this.clock();
    for (const p of partitions) this.heardAt.heard(p, now);
    return now;
  }

  /** `settle`: a checkpoint alignment it completes is cut now (a message's batches leave it to the message). */
  private handle(h: Held, settle = true): void {
    this.heard(h.b.partitions);
    if (this.alignment.holds(h.b.worker)) {
      this.alignment.hold(h, h.bytes);
      if (this.alignment.heldBytes > this.config.maxAlignmentBytes) return this.declineAlignment();
    } else this.merged(h);
    if (settle && this.alignment.completeWith(this.unheard)) this.alignedCheckpoint();
  }

  /** The alignment holds more than its bound: n is given up here, and what it held handled now. */
  private declineAlignment(): void {
    const n = this.alignment.aligning as number;
    const why = `its alignment held more than maxAlignmentBytes (${this.config.maxAlignmentBytes} bytes)`;
    const missing = this.alignment.missing(this.unheard);
    this.log.warn({ n, held: this.alignment.heldCount, missing }, `checkpoint ${n} declined: ${why}`);
    this.onAlignmentDeclined(n, why);
    for (const h of this.alignment.giveUp()) this.handle(h);
  }

  private merged({ b, seq, part }: Held): void {
    const now = this.clock();
    const outcome = this.aligner.offer(b, now);
    this.batches[outcome]++;
    if (outcome === "accepted") this.output.accepted(b.from, now);
    if (outcome === "overlap")
      this.log.warn(
        { seq, worker: b.worker, from: b.from, to: b.to },
        "partial batch overlaps what its partitions already reported: refused (two workers own the same partitions?)",
      );
    this.output.release(now, -1 - this.config.mergePartition, seq, part);
  }

  /**
   * Every second, between messages (the host's progress timer, never while a cut's state is
   * captured): a checkpoint alignment completed by a partition gone unheard, and ticks the idleness
   * rule releases, would otherwise wait for the next message, which may not come (every live worker
   * done, one stalled). Not while aligning.
   */
  handleProgress(now: number): void {
    if (this.alignment.completeWith(this.unheard)) return this.alignedCheckpoint();
    if (this.alignment.aligning === null) this.output.release(now, TIMER_GROUP - this.config.mergePartition, now);
  }

  /**
   * The state a checkpoint cut now carries beside the core's snapshot: resuming at the first message
   * held (by this alignment, or by one in progress), else after the last.
   */
  handleCheckpoint(plan: AlignedCut): OperatorCheckpoint<MergeState> {
    const first = plan.aligned ? plan.aligned.held[0] : this.alignment.firstHeld();
    const seq = first === undefined ? this.seq : first.seq - 1;
    const { mergePartition, mergePartitions } = this.config;
    const layout = mergePartitions > 1 ? { mergePartition, mergePartitions } : {};
    const groups = this.groups === null ? {} : { groups: this.groups.groups() };
    const state: MergeState = {
      seq,
      aligner: this.aligner.state(),
      lastBarrier: this.alignment.lastN,
      ...layout,
      ...groups,
    };
    return { state, steps: snapshotStepsOf(this.mergeCore) };
  }

  /** The merge core: fresh, or the one restored. */
  get core(): StreamCore {
    return this.mergeCore;
  }

  /** Back to a cut: its core, its place in TM_PARTIALS, the tick aligner, the last barrier, the log time. */
  restore({ state, core, logTime }: Restored<MergeState>): void {
    this.groups = core instanceof MergeGroups ? core : null;
    this.mergeCore = ownKeys(core, this.config);
    this.seq = state.seq;
    this.aligner.restore(state.aligner, this.clock());
    this.alignment.restore(state.lastBarrier ?? 0);
    this.output.logTime = logTime;
  }
}
