/**
 * MergeOperator: the merge stage's operator (docs/decisions/0029-two-stage-dataflow.md, "Runtime"),
 * run by an OperatorHost (host/operator-host.ts), which owns its output, gate, counts and stop. It
 * reads its merge partition of TM_PARTIALS in stream order from its own checkpointed sequence,
 * hands each batch to the TickAligner (duplicates ignored, overlaps and malformed bodies counted and
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
 * checkpoint n is cut then, resuming at the first held message, and the held messages are handled
 * once its snapshot is encoded. What it holds for an alignment is bounded (maxAlignmentBytes): past
 * it the alignment of n is given up, as Flink once declined a checkpoint whose alignment buffered too
 * much, rather than holding the input (which would also hold the barrier awaited) or memory
 * (docs/decisions/0035-backpressure.md, "Aligned checkpoints").
 *
 * Held input: while its pane sink is saturated the operator reads no further (the host's OutputGate).
 */
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { snapshotStepsOf } from "../../core/snapshot/snapshot-steps.js";
import { TickAligner } from "../../core/partials/tick-aligner.js";
import { Silence } from "../../core/watermarks/silence.js";
import type { StreamCore } from "../../core/types.js";
import {
  BARRIER_HEADER,
  decodePartialBatch,
  parseBarrier,
  PartialBatchError,
  partialsSubject,
  STREAM_PARTIALS,
  type PartialBatch,
} from "../../protocol.js";
import { coreAggregates } from "../../core/create-core.js";
import { BarrierAlignment, type Aligned } from "../checkpoint/barrier-alignment.js";
import type { CheckpointHeader } from "../checkpoint/checkpoint-codec.js";
import type { CheckpointEvent } from "../checkpoint/checkpoint-event.js";
import { checkpointHeader, persistCheckpoint } from "../checkpoint/checkpoint-frame.js";
import { COORDINATED_MS } from "../checkpoint/checkpoint-spacing.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { MergeConfig } from "../config/merge-config.js";
import type { CheckpointWaiting, HostContext, Operator, OperatorOutput } from "../host/operator.js";
import { OrderedReader } from "../input/ordered-reader.js";
import { encodeCut } from "../checkpoint/encode-cut.js";
import { MergeRelease } from "./merge-release.js";
import type { MergeState } from "../checkpoint/merge-state.js";

export type BatchOutcome = "accepted" | "duplicate" | "overlap" | "malformed" | "mismatch";

/** A message held during a barrier alignment. */
interface Held {
  b: PartialBatch;
  seq: number;
  /** Its body's bytes (what the alignment bound counts). */
  bytes: number;
}

/** The timer's period, and the EmitGroup number of what it releases (below any message's, −1 − merge partition). */
const TIMER_MS = 1_000;
const TIMER_GROUP = -1_000_000;

export class MergeOperator implements Operator {
  readonly operatorId: string;
  /** None of its own beside the host's pane sink. */
  readonly outputs: readonly OperatorOutput[] = [];
  readonly aligner: TickAligner;
  /** The ticks released through the core, and what it emits (records merged, panes, lag). */
  readonly output: MergeRelease;
  readonly batches: Record<BatchOutcome, number> = { accepted: 0, duplicate: 0, overlap: 0, malformed: 0, mismatch: 0 };
  lastCheckpointWall: number | null = null;
  onCheckpoint: (e: CheckpointEvent) => void = () => undefined;
  readonly alignment: BarrierAlignment<Held>;
  /** A barrier of n arrived (the coordinator's start delay). */
  onBarrierSeen: (n: number) => void = () => undefined;
  /** Checkpoint n aligned and durable here. */
  onCheckpointAligned: (n: number, file: string, alignmentMs: number, workers: string[]) => void = () => undefined;
  /** The alignment of n was given up here: it held more than maxAlignmentBytes. */
  onAlignmentDeclined: (n: number, why: string) => void = () => undefined;

  private seq: number;
  private readonly reader: OrderedReader;
  private lastCheckpointLog = -Infinity;
  private lastSnapshotWall: number | null = null;
  /** From a cut until its snapshot is encoded: the reader waits on it. */
  private hold: Promise<void> | undefined;
  private writing: Promise<void> | undefined;
  /** An aligned checkpoint cut and not yet durable (waiting for its panes' acks, or written). */
  private barrierWaiting: { n: number; since: number } | null = null;
  private closing = false;
  private readonly clock: () => number;
  private readonly log: HostContext["log"];
  private lastAlignedWall: number | null = null;
  private timer: NodeJS.Timeout | undefined;
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
    private readonly core: StreamCore,
    private readonly store: CheckpointStore,
    js: JetStreamClient,
    private readonly host: HostContext,
    restored: CheckpointHeader | undefined,
  ) {
    this.operatorId = config.worker;
    const clock = (this.clock = host.clock);
    const log = (this.log = host.log);
    this.aligner = new TickAligner(config.partitionCount, coreAggregates(config.core), config.idleTimeoutMs);
    if (restored?.merge) this.aligner.restore(restored.merge.aligner, clock());
    const logTime = restored?.logTime ?? null;
    if (logTime !== null) this.lastCheckpointLog = logTime;
    this.seq = restored?.merge?.seq ?? 0;
    this.alignment = new BarrierAlignment(config.partitionCount, restored?.merge?.lastBarrier ?? 0);
    this.heardAt = new Silence(config.partitionCount, clock());
    this.output = new MergeRelease(this.aligner, core, config.partitionCount, host, logTime);
    const name = `${STREAM_PARTIALS} ${partialsSubject(config.mergePartition)}`;
    this.reader = new OrderedReader(js, STREAM_PARTIALS, partialsSubject(config.mergePartition), name, this.seq, {
      message: (m) => this.onMessage(m),
      backpressure: () => this.hold ?? host.gate().blocked(),
      problem: (what, err) => log.warn({ err: err instanceof Error ? err.message : err }, what),
    });
  }

  onStart(): void {
    this.reader.start();
    this.timer = setInterval(() => this.onTimer(), TIMER_MS);
    this.timer.unref();
  }

  /** Records merged (the events the partials stand for). */
  get eventsTotal(): number {
    return this.output.eventsTotal;
  }

  checkpointWaiting(): CheckpointWaiting | null {
    const w = this.barrierWaiting;
    return w === null ? null : { n: w.n, waitedMs: this.clock() - w.since };
  }

  /** The reader holds on the gate itself, and takes the next message once it opens. */
  onOutputOpen(): void {}

  onConnectionLost(): void {}

  /** Back on NATS after a disconnect: the consumer is recreated from the last sequence + 1. */
  onConnectionRestored(): void {
    this.reader.restart();
  }

  async onStop(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    await this.reader.stop();
  }

  /** Once the checkpoint being written is done, the final one, durable after its panes' acks. */
  async handleFinalCheckpoint(deadline: Promise<false>): Promise<boolean> {
    const before = this.writing ? await Promise.race([this.writing.then(() => true), deadline]) : true;
    return before && (await Promise.race([this.checkpoint(undefined, true).then(() => true), deadline]));
  }

  /** The coordinator gave checkpoint n up: what was held for it is handled now. */
  giveUp(n: number): void {
    if (this.alignment.aligning !== n) return;
    for (const h of this.alignment.giveUp()) this.handle(h);
  }

  private onMessage(m: JsMsg): void {
    const barrier = m.headers?.get(BARRIER_HEADER);
    if (barrier) return this.onBarrier(m, barrier);
    let b: PartialBatch;
    try {
      b = decodePartialBatch(m.data);
    } catch (err) {
      if (!(err instanceof PartialBatchError)) throw err;
      this.batches.malformed++;
      this.log.warn({ seq: m.seq, code: err.code, field: err.field, err: err.message }, "partial batch refused");
      this.seq = m.seq;
      return;
    }
    this.seq = m.seq;
    if ((b.mergePartitions ?? 1) !== this.config.mergePartitions) return this.mismatched(b, m.seq);
    this.handle({ b, seq: m.seq, bytes: m.data.byteLength });
    this.maybeCheckpoint();
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
    this.onBarrierSeen(body.n);
    const now = this.heard(body.partitions);
    const r = this.alignment.barrier(body, now, this.unheard);
    for (const h of r.released) this.handle(h);
    if (r.outcome === "aligned") this.alignedCheckpoint();
  }

  /** Every partition's barrier n is in: checkpoint n now, then the held messages. */
  private alignedCheckpoint(): void {
    const a = this.alignment.take();
    this.lastAlignedWall = this.clock();
    this.barrierWaiting = { n: a.n, since: this.lastAlignedWall };
    const writing = this.checkpoint(a)
      .then((file) => this.onCheckpointAligned(a.n, file, a.alignmentMs, a.workers))
      .catch((err: Error) => this.log.error({ n: a.n, err: err.message }, "aligned checkpoint failed"))
      .finally(() => {
        if (this.barrierWaiting?.n === a.n) this.barrierWaiting = null;
      });
    const before = this.writing;
    this.writing = Promise.all([before, writing]).then(() => (this.writing = undefined));
  }

  /** Its partitions were heard of now (a batch or a barrier, held or not); returns now. */
  private heard(partitions: readonly number[]): number {
    const now = this.clock();
    for (const p of partitions) this.heardAt.heard(p, now);
    return now;
  }

  private handle(h: Held): void {
    this.heard(h.b.partitions);
    if (this.alignment.holds(h.b.worker)) {
      this.alignment.hold(h, h.bytes);
      if (this.alignment.heldBytes > this.config.maxAlignmentBytes) return this.declineAlignment();
    } else this.merged(h.b, h.seq);
    if (this.alignment.completeWith(this.unheard)) this.alignedCheckpoint();
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

  private merged(b: PartialBatch, seq: number): void {
    const now = this.clock();
    const outcome = this.aligner.offer(b, now);
    this.batches[outcome]++;
    if (outcome === "accepted") this.output.accepted(b.from, now);
    if (outcome === "overlap")
      this.log.warn(
        { seq, worker: b.worker, from: b.from, to: b.to },
        "partial batch overlaps what its partitions already reported: refused (two workers own the same partitions?)",
      );
    this.output.release(now, -1 - this.config.mergePartition, seq);
  }

  /**
   * Every second, between messages: a checkpoint alignment completed by a partition gone unheard,
   * and ticks the idleness rule releases, would otherwise wait for the next message, which may not
   * come (every live worker done, one stalled). Not while a snapshot encodes, nor while aligning.
   */
  private onTimer(): void {
    if (this.hold !== undefined || this.closing) return;
    if (this.alignment.completeWith(this.unheard)) return this.alignedCheckpoint();
    if (this.alignment.aligning === null)
      this.output.release(this.clock(), TIMER_GROUP - this.config.mergePartition, this.clock());
  }

  private maybeCheckpoint(): void {
    const t = this.output.logTime;
    if (this.writing || this.closing || t === null || t < this.lastCheckpointLog + this.config.checkpointEveryMs)
      return;
    const now = this.clock();
    if (this.alignment.aligning !== null) return;
    if (this.lastAlignedWall !== null && now - this.lastAlignedWall < COORDINATED_MS) return;
    if (this.lastSnapshotWall !== null && now - this.lastSnapshotWall < this.config.checkpointMinWallMs) return;
    this.writing = this.checkpoint()
      .then(() => undefined)
      .catch((err: Error) => this.log.error({ err: err.message }, "checkpoint failed; the next one will retry"))
      .finally(() => (this.writing = undefined));
  }

  /**
   * Cuts here (between two messages), encodes while the reader waits, writes once the panes before
   * are acknowledged; an aligned one resumes at its first held message and handles the held
   * messages once the snapshot is encoded. Resolves with the file.
   */
  private async checkpoint(aligned?: Aligned<Held>, final = false): Promise<string> {
    const t0 = performance.now();
    // Resume at the first message held (by this alignment, or by one in progress), else after the last.
    const first = aligned ? aligned.held[0] : this.alignment.firstHeld();
    const seq = first === undefined ? this.seq : first.seq - 1;
    const logTime = this.output.logTime;
    const owner = { ...this.config, operatorId: this.operatorId };
    const state = { offsets: [], merge: this.handleCheckpoint(seq) };
    const header = checkpointHeader(owner, logTime, this.clock(), state, aligned?.n, final);
    this.lastCheckpointLog = logTime ?? -Infinity;
    this.lastSnapshotWall = header.wallTime;
    // The reader waits on `hold` until the state is captured; then the held messages are handled.
    let captured!: () => void;
    this.hold = new Promise<void>((r) => (captured = r)).then(() => {
      this.hold = undefined;
      for (const h of aligned?.held ?? []) this.handle(h);
    });
    const encoding = encodeCut({ header, steps: snapshotStepsOf(this.core), t0 }, captured);
    const flushed = this.host.flushOutput();
    const taken = await encoding;
    await flushed;
    return persistCheckpoint(this.store, taken.cp, taken, (e) => {
      this.lastCheckpointWall = header.wallTime;
      this.onCheckpoint(e);
    });
  }

  /** The state a checkpoint cut now carries beside the core's snapshot, resuming after `seq`. */
  private handleCheckpoint(seq: number): MergeState {
    return { seq, aligner: this.aligner.state(), lastBarrier: this.alignment.lastN };
  }
}
