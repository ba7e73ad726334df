/**
 * The merge operator's barrier alignment (docs/decisions/0031-aligned-checkpoints.md), as Flink
 * aligns a checkpoint barrier over its input channels: a channel here is an upstream worker.
 *
 * Invariant: while checkpoint n is being aligned, every message of a worker that has sent barrier n
 * is held (in arrival order), every other worker's is handled; n is aligned once the barriers' partitions,
 * with the partitions the tick aligner has left out as silent, cover every TM_EVENTS partition. At
 * that point the operator's state holds exactly the partials emitted before each worker's cut n,
 * which is what the operator checkpoints before it handles the held messages. A barrier of an n at
 * or below the last aligned one is a replay and ignored; a barrier of a later n while one is being
 * aligned gives up the older one (its held messages are released). What is held is counted in
 * bytes: the operator gives an alignment up past its bound (docs/decisions/0035-backpressure.md,
 * "Aligned checkpoints"), and barriers of an n given up are ignored like replays.
 *
 * Pure: no I/O, no clock (times are given).
 */
import type { BarrierBody } from "../../protocol.js";

export type BarrierOutcome = "ignored" | "aligning" | "aligned";

export interface Aligned<M> {
  n: number;
  /** Wall ms from the first barrier n to the last. */
  alignmentMs: number;
  /** The workers whose barrier n was aligned (each must acknowledge its checkpoint n). */
  workers: string[];
  /** The held messages, in arrival order: to be handled after the checkpoint. */
  held: M[];
}

export class BarrierAlignment<M> {
  private n: number | null = null;
  private firstAt = 0;
  private alignedAt = 0;
  private readonly covered = new Set<number>();
  private readonly workers = new Set<string>();
  private held: M[] = [];
  private bytes = 0;
  /** The last n given up (barriers of it, arriving late, are ignored). */
  private lastGivenUp = 0;

  constructor(
    private readonly partitionCount: number,
    /** The last n aligned (a restored operator's). */
    private lastAligned = 0,
  ) {}

  /** The n being aligned, null when none. */
  get aligning(): number | null {
    return this.n;
  }

  get lastN(): number {
    return this.lastAligned;
  }

  /** A restored operator's last n aligned (before any barrier): barriers up to it, replayed, are ignored. */
  restore(lastAligned: number): void {
    this.lastAligned = lastAligned;
  }

  /** Wall clock of the first barrier of the n being aligned (null: none). */
  get since(): number | null {
    return this.n === null ? null : this.firstAt;
  }

  /** The first partition whose barrier is still awaited (null: none, or not aligning). */
  missing(silent: (p: number) => boolean): number | null {
    if (this.n === null) return null;
    for (let p = 0; p < this.partitionCount; p++) if (!this.covered.has(p) && !silent(p)) return p;
    return null;
  }

  /** The first message held, undefined when none. */
  firstHeld(): M | undefined {
    return this.held[0];
  }

  /** Messages held so far. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Bytes of the messages held so far. */
  get heldBytes(): number {
    return this.bytes;
  }

  /**
   * A barrier arrived at `now`. "aligned": call `take()`, checkpoint, then handle the held messages.
   * Returns also the messages of an older n given up for a newer one (handle them now).
   */
  barrier(b: BarrierBody, now: number, silent: (p: number) => boolean): { outcome: BarrierOutcome; released: M[] } {
    if (b.n <= Math.max(this.lastAligned, this.lastGivenUp) || (this.n !== null && b.n < this.n))
      return { outcome: "ignored", released: [] };
    const released = this.n !== null && b.n > this.n ? this.giveUp() : [];
    if (this.n === null) {
      this.n = b.n;
      this.firstAt = now;
    }
    this.workers.add(b.worker);
    for (const p of b.partitions) if (p < this.partitionCount) this.covered.add(p);
    this.alignedAt = now;
    return { outcome: this.complete(silent) ? "aligned" : "aligning", released };
  }

  /** True when messages of `worker` are to be held (it has sent the barrier being aligned). */
  holds(worker: string): boolean {
    return this.n !== null && this.workers.has(worker);
  }

  hold(m: M, bytes = 0): void {
    this.held.push(m);
    this.bytes += bytes;
  }

  /** Whether the silent partitions now complete the alignment (a worker left out as idle). */
  completeWith(silent: (p: number) => boolean): boolean {
    return this.n !== null && this.complete(silent);
  }

  /** Ends the alignment of n, aligned: what the checkpoint needs, and the held messages. */
  take(): Aligned<M> {
    const out: Aligned<M> = {
      n: this.n as number,
      alignmentMs: this.alignedAt - this.firstAt,
      workers: [...this.workers].sort(),
      held: this.held,
    };
    this.lastAligned = this.n as number;
    this.reset();
    return out;
  }

  /** Gives up the alignment in progress (a timeout, its bound): its held messages, to be handled now. */
  giveUp(): M[] {
    const held = this.held;
    if (this.n !== null) this.lastGivenUp = this.n;
    this.reset();
    return held;
  }

  private complete(silent: (p: number) => boolean): boolean {
    for (let p = 0; p < this.partitionCount; p++) if (!this.covered.has(p) && !silent(p)) return false;
    return true;
  }

  private reset(): void {
    this.n = null;
    this.covered.clear();
    this.workers.clear();
    this.held = [];
    this.bytes = 0;
  }
}
