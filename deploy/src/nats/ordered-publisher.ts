/**
 * OrderedPublisher: the backfill's writer to TM_EVENTS (docs/decisions/0006-engine-runtime.md,
 * "Backfill"). Messages go out in the order given, pipelined, with one rule: a message waits while
 * an earlier message of its partition is unacknowledged, and so does everything after it. So each
 * partition is stored in the order given whatever happens to the connection — a publish lost with
 * it (a nats-server restart) times out and is sent again with the same message id before anything
 * after it on that partition — and, when nothing is lost, the stream receives the messages in the
 * order given, as one pipelined connection would send them: a re-run on a fresh stream stores
 * every message at the same sequence.
 *
 * Why: with every message pipelined, the publishes lost in a disconnect leave a gap while the ones
 * sent after the reconnect are stored, and a re-run fills the gap at the end of the partition. The
 * engine reads a partition in stream order, so it would handle those events last, behind the log
 * time, and compute other panes than from the recording in order.
 *
 * No I/O of its own: `send` publishes one message once and resolves with its ack.
 */

export interface OrderedMessage {
  partition: number;
  msgId: string;
}

export interface OrderedPublisherOptions<M extends OrderedMessage> {
  /** Publishes one message once; resolves with whether the stream had it already. */
  send: (m: M) => Promise<{ duplicate: boolean }>;
  /** A failure worth sending the same message again for (a timeout, no responders yet). */
  retryable: (err: unknown) => boolean;
  /** Messages queued (in flight included) before `publish` waits. */
  maxQueued: number;
  /** How long one message is sent again before the run fails. */
  retryForMs: number;
  retryDelayMs: number;
  onRetry?: (m: M, err: unknown) => void;
  /** The error a run fails with when `m` could not be stored (`err`: the last failure). */
  failed: (m: M, err: unknown) => Error;
}

export class OrderedPublisher<M extends OrderedMessage> {
  /** Messages not sent yet, in the order given, from `head`. */
  private waiting: M[] = [];
  private head = 0;
  /** Partitions with a publish in flight. */
  private readonly busy = new Set<number>();
  private failure: Error | undefined;
  private waiters: Array<() => void> = [];
  /** Acknowledged messages the stream already had (a re-run, or a resend whose first copy was stored). */
  duplicates = 0;
  /** Sends repeated after a retryable failure. */
  retries = 0;

  constructor(private readonly opts: OrderedPublisherOptions<M>) {}

  /** Messages given and not yet acknowledged. */
  get queued(): number {
    return this.waiting.length - this.head + this.busy.size;
  }

  /** Queues `m` after the messages given before it; resolves once there is room for more. */
  async publish(m: M): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    this.waiting.push(m);
    this.pump();
    while (this.queued >= this.opts.maxQueued && this.failure === undefined) await this.change();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Resolves once every message is acknowledged; rejects with the first failure. */
  async drain(): Promise<void> {
    while (this.queued > 0 && this.failure === undefined) await this.change();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Sends, in order, every waiting message up to the first whose partition is busy. */
  private pump(): void {
    while (this.head < this.waiting.length && this.failure === undefined) {
      const m = this.waiting[this.head] as M;
      if (this.busy.has(m.partition)) break;
      this.head++;
      this.busy.add(m.partition);
      this.untilAcked(m).then(
        () => {
          this.busy.delete(m.partition);
          this.pump();
          this.wake();
        },
        (err: unknown) => {
          this.failure ??= this.opts.failed(m, err);
          this.wake();
        },
      );
    }
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
  }

  private async untilAcked(m: M): Promise<void> {
    const since = Date.now();
    for (;;) {
      try {
        if ((await this.opts.send(m)).duplicate) this.duplicates++;
        return;
      } catch (err) {
        if (!this.opts.retryable(err) || Date.now() - since >= this.opts.retryForMs) throw err;
        this.retries++;
        this.opts.onRetry?.(m, err);
        await new Promise((r) => setTimeout(r, this.opts.retryDelayMs));
      }
    }
  }

  private change(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
