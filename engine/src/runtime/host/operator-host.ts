/**
 * OperatorHost: runs one operator — an engine worker or a merge operator — and does for it what
 * every operator needs (docs/decisions/0045-operator-host.md): the input loop (input-loop.ts:
 * bounded batches pulled from the operator's InputSource and handed to `processBatch`), wall-clock
 * progress (`handleProgress`), when and how a checkpoint is cut (host-checkpoints.ts: the trigger
 * asked between batches; hold, capture, release, encode across turns, persist after the acks,
 * report), its output (EmitGroup bodies into reused buffers, compressed or not, to the pane sink),
 * the gate that holds its input while an output is saturated (docs/decisions/0035-backpressure.md),
 * pane counts and pipeline lag, the backpressure it reports (tm.status, /metrics), the stop — input
 * stopped, a final checkpoint once the panes before it are acknowledged, all within one deadline —
 * and the NATS connection's comings and goings. The operator implements its handlers (operator.ts).
 * It restores the operator it builds: the state the restore step chose (checkpoint/restore-plan.ts)
 * goes to the operator's `restore` before the host is handed back, so no input, progress timer,
 * cut, status or metric reaches the operator unrestored.
 *
 * Invariant: a stop writes the final checkpoint only after every publish before it is acknowledged
 * (never durable ahead of its panes); past the deadline it writes none and the log replays them.
 */
import type { PublishStats } from "../output/pane-sink.js";
import type { CheckpointOwner } from "../checkpoint/checkpoint-frame.js";
import { epochMsgId } from "../output/epoch-output.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { Restored } from "../checkpoint/state-frames.js";
import { HostCheckpoints } from "./host-checkpoints.js";
import { InputLoop } from "./input-loop.js";
import { bodySender, pooledBodySender } from "../output/body-sender.js";
import { OutputGate } from "../output/output-gate.js";
import { PipelineLag } from "../status/pipeline-lag.js";
import type { CheckpointWaiting, HostContext, Operator } from "./operator.js";
import type { OperatorLog } from "../operator-log.js";
import type { OperatorSink } from "../output/operator-sink.js";
import { PaneCounts } from "./pane-counts.js";

/** The checkpointed state of an operator kind (WorkerState, MergeState). */
export type StateOf<Op> = Op extends Operator<infer _B, infer S> ? S : never;

export interface HostOptions<S = unknown> {
  log: OperatorLog;
  /** Gzip the pane bodies (engine.compressPanes). */
  compressPanes: boolean;
  /** Compress on the gzip thread (a CompressingSink around the sink) rather than the operator's (docs/decisions/0047-binary-panes.md). */
  compressOffThread?: boolean;
  clock?: () => number;
  /** Where its checkpoints go, and who writes them (its partitions; the id is the operator's). */
  store: CheckpointStore;
  owner: Omit<CheckpointOwner, "operatorId">;
  /** The operator's state at the checkpoint it resumes from (RestorePlan.restored; absent or null: a fresh start). */
  restored?: Restored<S> | null;
}

export class OperatorHost<Op extends Operator> {
  readonly operator: Op;
  readonly gate: OutputGate;
  readonly panes = new PaneCounts();
  readonly pipelineLag = new PipelineLag();
  /** Where the operator's pane and late bodies go: the sink given, or the gzip thread in front of it. */
  readonly sink: OperatorSink;
  /** When and how the operator's checkpoints are cut (host-checkpoints.ts). */
  readonly checkpoints: HostCheckpoints;
  private readonly loop: InputLoop<unknown>;
  private closing = false;
  private connectionDown = false;
  private progress: NodeJS.Timeout | undefined;

  constructor(
    given: OperatorSink,
    private readonly opts: HostOptions<StateOf<Op>>,
    create: (ctx: HostContext) => Op,
  ) {
    const clock = opts.clock ?? Date.now;
    const { buffers, send, sink } = opts.compressOffThread
      ? pooledBodySender(given, opts.compressPanes)
      : { ...bodySender(given, opts.compressPanes), sink: given };
    this.sink = sink;
    const epoch = opts.owner.epoch ?? 0;
    const ctx: HostContext = {
      send: epoch > 0 ? (m) => send({ ...m, msgId: epochMsgId(m.msgId, epoch) }) : send,
      epoch,
      buffers,
      panes: this.panes,
      pipelineLag: this.pipelineLag,
      log: opts.log,
      clock,
      outputSaturated: () => sink.saturated || this.operator.outputs.some((o) => o.out?.saturated === true),
      flushOutput: () => this.flushOutput(),
      cut: (plan) => this.checkpoints.start(plan),
      holding: () => this.checkpoints.holding,
      wake: () => this.loop.wake(),
    };
    const op = (this.operator = create(ctx));
    if (opts.restored) {
      op.restore(opts.restored);
      op.trigger.restored(opts.restored.logTime);
    }
    const outputs = [{ cause: "TM_PANES" as const, out: sink }, ...op.outputs];
    this.gate = new OutputGate(outputs, clock, () => this.loop.wake());
    const deps = { owner: opts.owner, store: opts.store, log: opts.log, clock, flushOutput: ctx.flushOutput };
    const wake = (): void => this.loop.wake();
    this.checkpoints = new HostCheckpoints(op, op.trigger, { ...deps, wake });
    this.loop = new InputLoop<unknown>({
      source: op.input,
      process: (batch) => op.processBatch(batch),
      gate: () => this.gate,
      outputSaturated: ctx.outputSaturated,
      checkpoints: this.checkpoints,
    });
  }

  get operatorId(): string {
    return this.operator.operatorId;
  }

  get eventsTotal(): number {
    return this.operator.eventsTotal;
  }

  /** policy → kind → panes emitted. */
  get panesEmitted(): Map<string, Map<string, number>> {
    return this.panes.byPolicy;
  }

  /** Pane and late publishes not yet acknowledged. */
  get panesInFlight(): number {
    return this.sink.inFlight;
  }

  /** Each output stream's window (tidemark_*_publish_*, tm.status `backpressure`). */
  publishStats(): Array<{ stream: string; stats: PublishStats }> {
    const out = [{ stream: "TM_PANES", stats: this.sink.stats() }];
    for (const o of this.operator.outputs) if (o.out) out.push({ stream: o.cause, stats: o.out.stats() });
    return out;
  }

  checkpointWaiting(): CheckpointWaiting | null {
    return this.checkpoints.waiting();
  }

  /** Starts the input and the operator's wall-clock progress. */
  start(): void {
    this.loop.start();
    const op = this.operator;
    if (op.handleProgress === undefined || op.progressEveryMs === undefined) return;
    const clock = this.opts.clock ?? Date.now;
    this.progress = setInterval(() => {
      if (!this.closing && !this.checkpoints.holding) op.handleProgress?.(clock());
    }, op.progressEveryMs);
    this.progress.unref();
  }

  /** Stops reading, writes a final checkpoint (after the pending panes are acknowledged), closes the outputs. */
  async close(flushTimeoutMs = 5_000): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.progress);
    await this.loop.stop();
    // One deadline for everything that waits on acks: with TM_PANES unreachable they never come
    // (docs/operations.md, "Engine workers").
    const deadline = new Promise<false>((r) => setTimeout(() => r(false), flushTimeoutMs).unref());
    if (!(await this.checkpoints.final(deadline)))
      this.opts.log.warn({}, "pending panes were not acknowledged in time: no final checkpoint (the log replays them)");
    this.sink.close();
    for (const o of this.operator.outputs) o.out?.close();
  }

  /** The connection to NATS dropped: nothing to do until it returns (the input waits). */
  connectionLost(): void {
    this.connectionDown = true;
  }

  /** Back online: the operator's consumers are recreated from their last sequence + 1. */
  connectionRestored(): void {
    this.connectionDown = false;
    this.operator.input.restart();
  }

  /** True between `connectionLost()` and `connectionRestored()`. */
  get disconnected(): boolean {
    return this.connectionDown;
  }

  /** Resolves once the panes and the operator's own outputs published so far are acknowledged. */
  private flushOutput(): Promise<void> {
    const flushes = [this.sink.flush(), ...this.operator.outputs.map((o) => o.out?.flush())];
    return Promise.all(flushes).then(() => undefined);
  }
}
