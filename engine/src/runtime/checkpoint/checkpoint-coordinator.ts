/**
 * The checkpoint coordinator of the two-stage dataflow (docs/decisions/0031-aligned-checkpoints.md),
 * run by the merge operator: Flink's CheckpointCoordinator on TM_CHECKPOINTS.
 *
 * Invariant: at most one checkpoint is in flight. Checkpoint n starts (`tm.checkpoints.start`) every
 * `everyMs` of wall time once the previous one ended; it completes (`tm.checkpoints.complete`, with
 * every operator's file) once the merge operator has aligned barrier n and written its checkpoint,
 * and every worker whose barrier it aligned has acknowledged its own; it is aborted
 * (`tm.checkpoints.abort`) when nothing of it has been heard for `timeoutMs` — no barrier, no
 * acknowledgement, no notice that an operator's checkpoint n waits for its publishes' acks
 * (checkpoint-waits.ts), the merge operator's own input not held — or when the merge operator
 * declines it (its alignment held too much), and the merge operator then gives its alignment up.
 * So a checkpoint held by backpressure completes late rather than being aborted again and again
 * (docs/decisions/0035-backpressure.md). Recovery restores every operator from the newest completed n.
 * A savepoint's request (SUBJECT_SAVEPOINT_REQUEST) starts the next checkpoint at once.
 *
 * With several merge partitions (docs/decisions/0033-merge-partitions.md) it runs in the operator of
 * merge partition 0; the operator of each other partition aligns barrier n on its own subject and
 * acknowledges with the workers it aligned: n completes once every merge partition has, and every
 * worker any of them aligned has acknowledged.
 */
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  checkpointAckSubject,
  STREAM_CHECKPOINTS,
  SUBJECT_CHECKPOINT_ABORT,
  SUBJECT_CHECKPOINT_COMPLETE,
  SUBJECT_CHECKPOINT_START,
  SUBJECT_SAVEPOINT_REQUEST,
  type CheckpointAck,
  type CheckpointComplete,
} from "../../protocol.js";
import { followWaits } from "./checkpoint-waits.js";
import type { OperatorLog } from "../operator-log.js";
import { checkpointSpacing } from "./checkpoint-spacing.js";

interface InFlight {
  n: number;
  startedAt: number;
  /** Wall clock when something of n was last heard (the timeout runs from here). */
  progressAt: number;
  firstBarrierAt: number | null;
  merge: { file: string; alignmentMs: number; workers: string[] } | null;
  acks: Map<string, CheckpointAck>;
}

export interface CoordinatorOptions {
  operator: string;
  everyMs: number;
  timeoutMs: number;
  /** Merge partitions: an acknowledgement of n from each partition's operator but 0 (this one) completes it. */
  mergePartitions: number;
  /** True while this coordinator's own operator is held by backpressure or its checkpoint waits for acks. */
  held?: () => boolean;
}

export class CheckpointCoordinator {
  completed = 0;
  aborted = 0;
  /** The last checkpoint completed, null: none yet. */
  lastCompleted: CheckpointComplete | null = null;
  onComplete: (c: CheckpointComplete) => void = () => undefined;
  /** n is given up: the merge operator releases what it holds for it. */
  onAbort: (n: number) => void = () => undefined;
  /** Wall ms from the start notice to the merge operator's first barrier n (checkpointStartDelay). */
  onStartDelay: (ms: number) => void = () => undefined;

  private last = 0;
  /** Wall clock when the last checkpoint completed or was aborted. */
  private lastEnd = 0;
  /** The longest input hold an operator reported for the last completed checkpoint, ms. */
  private lastHoldMs = 0;
  private inFlight: InFlight | null = null;
  /** A savepoint asked for a checkpoint: the next starts without waiting for the spacing. */
  private wanted = false;
  private timer: NodeJS.Timeout | undefined;
  private subs: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly o: CoordinatorOptions,
    private readonly log: OperatorLog,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Continues the numbering after the newest start stored, and starts the timer. */
  async start(): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const last = await jsm.streams
      .getMessage(STREAM_CHECKPOINTS, { last_by_subj: SUBJECT_CHECKPOINT_START })
      .catch(() => null);
    const n = last ? Number((JSON.parse(last.string()) as { n?: unknown }).n) : 0;
    this.last = Number.isSafeInteger(n) ? n : 0;
    // The first checkpoint comes `everyMs` after the start, as every later one after the previous.
    this.lastEnd = this.clock();
    const acks = this.nc.subscribe(checkpointAckSubject("*"), {
      callback: (_err, m) => {
        try {
          this.acked(JSON.parse(m.string()) as CheckpointAck);
        } catch {
          this.log.warn({ subject: m.subject }, "checkpoint acknowledgement not understood; ignored");
        }
      },
    });
    const savepoints = this.nc.subscribe(SUBJECT_SAVEPOINT_REQUEST, {
      callback: (_err, m) => {
        this.wanted = true;
        m.respond(JSON.stringify({ after: this.last }));
        this.tick();
      },
    });
    this.subs = [acks, savepoints, followWaits(this.nc, (w) => this.progress(w.n))];
    this.timer = setInterval(() => this.tick(), Math.min(this.o.everyMs, 1_000));
  }

  stop(): void {
    clearInterval(this.timer);
    for (const s of this.subs) s.unsubscribe();
  }

  /** The merge operator gave the alignment of n up (it held too much): n is aborted now. */
  decline(n: number, why: string): void {
    const f = this.inFlight;
    if (f?.n === n) this.abort(f, `declined by ${this.o.operator}: ${why}`);
  }

  /** The n in flight, null when none. */
  get current(): number | null {
    return this.inFlight?.n ?? null;
  }

  /** The merge operator saw a barrier of n. */
  barrierSeen(n: number): void {
    this.progress(n);
    const f = this.inFlight;
    if (f?.n !== n || f.firstBarrierAt !== null) return;
    f.firstBarrierAt = this.clock();
    this.onStartDelay(f.firstBarrierAt - f.startedAt);
  }

  /** The merge operator aligned n and its checkpoint n is durable. */
  mergeAligned(n: number, file: string, alignmentMs: number, workers: string[]): void {
    const f = this.inFlight;
    if (f?.n !== n) return;
    f.progressAt = this.clock();
    f.merge = { file, alignmentMs, workers };
    this.maybeComplete();
  }

  private acked(a: CheckpointAck): void {
    const f = this.inFlight;
    if (f?.n !== a.n || typeof a.operator !== "string" || typeof a.file !== "string") return;
    f.progressAt = this.clock();
    f.acks.set(a.operator, a);
    this.maybeComplete();
  }

  private tick(): void {
    const now = this.clock();
    const f = this.inFlight;
    if (f !== null) {
      if (this.o.held?.() === true) f.progressAt = now;
      if (now - f.progressAt >= this.o.timeoutMs)
        this.abort(
          f,
          `not complete after ${Math.round((now - f.startedAt) / 1000)} s, nothing of it heard for ${this.o.timeoutMs / 1000} s`,
        );
      return;
    }
    if (!this.wanted && now - this.lastEnd < checkpointSpacing(this.o.everyMs, this.lastHoldMs)) return;
    this.wanted = false;
    const n = ++this.last;
    this.inFlight = { n, startedAt: now, progressAt: now, firstBarrierAt: null, merge: null, acks: new Map() };
    this.store(SUBJECT_CHECKPOINT_START, { n, startedAt: now }, `start:${n}`);
  }

  /** Something of n was heard: its timeout starts again. */
  private progress(n: number): void {
    const f = this.inFlight;
    if (f?.n === n) f.progressAt = this.clock();
  }

  private maybeComplete(): void {
    const f = this.inFlight;
    if (f === null || f.merge === null) return;
    const mergeAcks = [...f.acks.values()].filter((a) => a.merge !== undefined);
    const partitions = new Set(mergeAcks.map((a) => a.merge?.partition));
    for (let m = 1; m < this.o.mergePartitions; m++) if (!partitions.has(m)) return;
    const workers = new Set([...f.merge.workers, ...mergeAcks.flatMap((a) => a.merge?.workers ?? [])]);
    if (![...workers].every((w) => f.acks.has(w))) return;
    const operators: Record<string, string> = { [this.o.operator]: f.merge.file };
    for (const a of [...mergeAcks, ...[...workers].map((w) => f.acks.get(w) as CheckpointAck)])
      operators[a.operator] = a.file;
    const c: CheckpointComplete = {
      n: f.n,
      startedAt: f.startedAt,
      completedAt: this.clock(),
      operators,
      alignmentMs: Math.max(f.merge.alignmentMs, ...mergeAcks.map((a) => a.merge?.alignmentMs ?? 0)),
    };
    this.inFlight = null;
    this.lastEnd = c.completedAt;
    this.lastHoldMs = Math.max(0, ...[...f.acks.values()].map((a) => a.holdWorkMs ?? 0));
    this.completed++;
    this.lastCompleted = c;
    this.store(SUBJECT_CHECKPOINT_COMPLETE, c, `complete:${f.n}`);
    this.onComplete(c);
  }

  private abort(f: InFlight, why: string): void {
    this.inFlight = null;
    this.lastEnd = this.clock();
    this.aborted++;
    this.log.warn({ n: f.n, missing: missingFor(f, this.o.mergePartitions) }, `checkpoint ${f.n} aborted: ${why}`);
    this.store(SUBJECT_CHECKPOINT_ABORT, { n: f.n, why }, `abort:${f.n}`);
    this.onAbort(f.n);
  }

  private store(subject: string, body: object, msgID: string): void {
    jetstream(this.nc)
      .publish(subject, JSON.stringify(body), { msgID })
      .catch((err: Error) => this.log.warn({ subject, err: err.message }, "checkpoint notice not stored"));
  }
}

/** What checkpoint n still waited for when it was aborted, for the log. */
function missingFor(f: InFlight, mergePartitions: number): string[] {
  const acks = [...f.acks.values()];
  const missing = f.merge === null ? ["the merge operator's alignment"] : [];
  const partitions = new Set(acks.map((a) => a.merge?.partition));
  for (let m = 1; m < mergePartitions; m++) if (!partitions.has(m)) missing.push(`merge partition ${m}'s alignment`);
  const workers = new Set([...(f.merge?.workers ?? []), ...acks.flatMap((a) => a.merge?.workers ?? [])]);
  for (const w of workers) if (!f.acks.has(w)) missing.push(w);
  return missing;
}
