/**
 * The input loop the OperatorHost runs for its operator (docs/decisions/0045-operator-host.md,
 * decision 5): woken when its input has something, it pulls bounded batches (CHUNK items) and hands
 * each to the operator, in slices of at most SLICE items between which the event loop serves I/O;
 * it pulls nothing while a checkpoint's state is being captured, nor while an output is saturated
 * (the OutputGate, docs/decisions/0035-backpressure.md) — then only a checkpoint due is cut, since a
 * cut needs no room downstream. After each slice it asks whether a checkpoint is due (between two
 * batches) and lets consumers held by the input's bound read on.
 */
import type { OutputGate } from "../output/output-gate.js";
import type { HostCheckpoints } from "./host-checkpoints.js";
import type { InputSource } from "./input-source.js";

/** Items pulled per slice before yielding to the event loop, in batches of CHUNK. */
const SLICE = 4096;
const CHUNK = 128;

export interface LoopDeps<B> {
  source: InputSource<B>;
  /** Handles one batch; returns how many items it held. */
  process(batch: B): number;
  gate(): OutputGate;
  outputSaturated(): boolean;
  checkpoints: HostCheckpoints;
}

export class InputLoop<B> {
  private scheduled = false;
  private closing = false;

  constructor(private readonly deps: LoopDeps<B>) {}

  start(): void {
    this.deps.source.start(() => this.wake());
  }

  async stop(): Promise<void> {
    this.closing = true;
    await this.deps.source.stop();
  }

  wake(): void {
    if (this.scheduled || this.closing) return;
    this.scheduled = true;
    setImmediate(() => this.pump());
  }

  private pump(): void {
    this.scheduled = false;
    const { source, checkpoints } = this.deps;
    if (this.closing || checkpoints.holding) return;
    if (this.deps.gate().blocked()) {
      // Held input: nothing pulled, but a checkpoint due is cut all the same (a worker's barrier
      // goes in order after the partials before it), and waits for its acks like any other.
      checkpoints.maybe();
      return;
    }
    // Small batches, so the sinks' windows stay full and little waits past them (one batch's output at most).
    let n = 0;
    let more = true;
    while (more && n < SLICE && !this.deps.outputSaturated() && !checkpoints.holding) {
      const batch = source.pull(CHUNK);
      if (batch === null) {
        more = false;
        break;
      }
      const k = this.deps.process(batch);
      n += k;
      more = k === CHUNK;
    }
    checkpoints.maybe();
    source.release();
    if (more) this.wake();
  }
}
