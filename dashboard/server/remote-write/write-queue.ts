/**
 * The samples waiting to be written, in order per series (docs/remote-write.md, "Order per
 * series"; docs/decisions/0039-remote-write.md). Each message read from TM_PANES (by stream sequence) is done
 * once all its samples were accepted, refused or dropped: only then may it be acknowledged. A
 * request carries at most one sample per series, so a request resent after a crash holds no
 * sample older than one the receiver already has.
 */
import type { OutSample } from "./settled-samples.js";
import { admitAgainst, SeriesNewest, type Admission } from "./series-newest.js";

export interface Queued extends OutSample {
  /** Stream sequence of the TM_PANES message the sample came from. */
  readonly seq: number;
}

/** What became of the samples offered with one message. */
export interface OfferResult {
  readonly queued: number;
  /** Samples of a message read again (after a restart, a redelivery): written before, or refused. */
  readonly resent: number;
  /** From a later message, older than (or another value at the time of) a sample taken for the series. */
  readonly dropped: readonly (OutSample & { readonly reason: "out-of-order" | "revised" })[];
}

export class WriteQueue {
  private readonly bySeries = new Map<string, Queued[]>();
  private readonly inFlight = new Map<string, Queued>();
  private readonly outstanding = new Map<number, number>();
  private readonly order: number[] = [];
  private pendingCount = 0;

  /**
   * @param accepted the newest sample the receiver accepted per series (restored after a restart)
   * @param capacity samples queued before `full`: the reader then stops taking messages
   */
  constructor(
    readonly accepted: SeriesNewest,
    readonly capacity: number,
  ) {}

  /** Samples queued or in flight. */
  get pending(): number {
    return this.pendingCount;
  }

  get full(): boolean {
    return this.pendingCount >= this.capacity;
  }

  /** Messages not yet done. */
  get openMessages(): number {
    return this.outstanding.size;
  }

  /** Takes one message's samples, in time order; a message with none queued is done at once (see `takeDone`). */
  offer(seq: number, samples: readonly OutSample[]): OfferResult {
    let queued = 0;
    let resent = 0;
    const dropped: (OutSample & { reason: "out-of-order" | "revised" })[] = [];
    for (const s of [...samples].sort((a, b) => a.ts - b.ts)) {
      const verdict = this.admit(s, seq);
      if (verdict === "new") {
        this.push({ ...s, seq });
        queued++;
      } else if (verdict === "resent") resent++;
      else dropped.push({ ...s, reason: verdict });
    }
    this.outstanding.set(seq, queued);
    this.order.push(seq);
    return { queued, resent, dropped };
  }

  /** Up to `max` samples, the oldest of each series, at most one per series; they stay pending until `settle`. */
  nextBatch(max: number): Queued[] {
    const batch: Queued[] = [];
    for (const [series, fifo] of this.bySeries) {
      if (batch.length >= max) break;
      if (this.inFlight.has(series)) continue;
      const head = fifo.shift() as Queued;
      if (fifo.length === 0) this.bySeries.delete(series);
      this.inFlight.set(series, head);
      batch.push(head);
    }
    return batch;
  }

  /** A batch's end: `accepted` records each sample as its series' newest; either way they are done. */
  settle(batch: readonly Queued[], accepted: boolean): void {
    for (const s of batch) {
      this.inFlight.delete(s.series);
      if (accepted) this.accepted.record(s.series, s.ts, s.value, s.seq);
      this.outstanding.set(s.seq, (this.outstanding.get(s.seq) ?? 1) - 1);
      this.pendingCount--;
    }
  }

  /** The messages whose samples are all done, in the order offered; forgotten here. */
  takeDone(): number[] {
    const done: number[] = [];
    let keep = 0;
    for (const t of this.order) {
      if (this.outstanding.get(t) === 0) {
        done.push(t);
        this.outstanding.delete(t);
      } else this.order[keep++] = t;
    }
    this.order.length = keep;
    return done;
  }

  /** Against the newest sample taken for the series: queued, in flight, else accepted. */
  private admit(s: OutSample, seq: number): Admission {
    const fifo = this.bySeries.get(s.series);
    const last = fifo?.[fifo.length - 1] ?? this.inFlight.get(s.series);
    if (last === undefined) return this.accepted.admit(s.series, s.ts, s.value, seq);
    return admitAgainst(last, s.ts, s.value, seq);
  }

  private push(s: Queued): void {
    const fifo = this.bySeries.get(s.series);
    if (fifo) fifo.push(s);
    else this.bySeries.set(s.series, [s]);
    this.pendingCount++;
  }
}
