/**
 * The idempotent sinks (design §7, §9): panes to TM_PANES `tm.panes.<policy>.<windowSize>` with
 * `Nats-Msg-Id = id#seq`, late records to TM_LATE `tm.late.<policy>` with a message id fixed by
 * the event's place in the log. Publishes are pipelined: many in flight, acks counted as they
 * come; a failed publish is retried with the same id (the stream deduplicates) until it is
 * acknowledged. `flush()` resolves once everything published before it is acknowledged, which
 * is what a checkpoint waits for: a checkpoint is never durable ahead of its panes.
 */
import type { PubAck } from "@nats-io/jetstream";
import { lateSubject, panesSubject, type LateRecord, type Pane } from "../protocol.js";

/** The one JetStream call the sink needs (JetStreamClient satisfies it). */
export interface JetStreamPublisher {
  publish(subject: string, payload: string, opts: { msgID: string; timeout?: number }): Promise<PubAck>;
}

const RETRY_MAX_MS = 2_000;

export class PaneSink {
  private pending = 0;
  private epoch = 0;
  private readonly perEpoch = new Map<number, number>();
  private readonly flushWaiters: Array<{ epoch: number; resolve: () => void }> = [];
  private roomWaiters: Array<() => void> = [];
  private closed = false;
  /** Publishes acknowledged (duplicates included). */
  acked = 0;
  duplicates = 0;
  failures = 0;

  constructor(
    private readonly js: JetStreamPublisher,
    private readonly maxInFlight: number,
    private readonly onError: (err: Error, subject: string) => void = () => undefined,
  ) {}

  get inFlight(): number {
    return this.pending;
  }

  /** True when the engine should stop producing until `room()` resolves. */
  get saturated(): boolean {
    return this.pending >= this.maxInFlight;
  }

  pane(pane: Pane): void {
    this.send(panesSubject(pane.policy, pane.window.end - pane.window.start), JSON.stringify(pane), `${pane.id}#${pane.seq}`);
  }

  late(record: LateRecord, msgID: string): void {
    this.send(lateSubject(record.policy), JSON.stringify(record), msgID);
  }

  /** Resolves once fewer than half of maxInFlight publishes are pending. */
  room(): Promise<void> {
    if (this.pending < this.maxInFlight / 2) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every publish issued before this call is acknowledged. */
  flush(): Promise<void> {
    const epoch = this.epoch++;
    if (this.settledThrough(epoch)) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push({ epoch, resolve }));
  }

  /** Stops retrying; pending publishes are abandoned (the log replays them after a restart). */
  close(): void {
    this.closed = true;
  }

  private send(subject: string, body: string, msgID: string): void {
    const epoch = this.epoch;
    this.perEpoch.set(epoch, (this.perEpoch.get(epoch) ?? 0) + 1);
    this.pending++;
    this.attempt(subject, body, msgID, epoch, 0);
  }

  private attempt(subject: string, body: string, msgID: string, epoch: number, tries: number): void {
    this.js.publish(subject, body, { msgID }).then(
      (ack) => {
        if (ack.duplicate) this.duplicates++;
        this.done(epoch);
      },
      (err: Error) => {
        this.failures++;
        this.onError(err, subject);
        if (this.closed) return;
        const wait = Math.min(RETRY_MAX_MS, 50 * 2 ** tries);
        setTimeout(() => this.attempt(subject, body, msgID, epoch, tries + 1), wait).unref();
      },
    );
  }

  private done(epoch: number): void {
    this.acked++;
    this.pending--;
    const left = (this.perEpoch.get(epoch) ?? 1) - 1;
    if (left === 0) this.perEpoch.delete(epoch);
    else this.perEpoch.set(epoch, left);
    if (this.roomWaiters.length > 0 && this.pending < this.maxInFlight / 2) {
      const waiters = this.roomWaiters;
      this.roomWaiters = [];
      for (const w of waiters) w();
    }
    for (let i = this.flushWaiters.length - 1; i >= 0; i--) {
      const w = this.flushWaiters[i] as { epoch: number; resolve: () => void };
      if (this.settledThrough(w.epoch)) {
        this.flushWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  private settledThrough(epoch: number): boolean {
    for (const e of this.perEpoch.keys()) if (e <= epoch) return false;
    return true;
  }
}
