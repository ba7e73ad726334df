/**
 * OrderedPublisher: the backfill's writer to TM_EVENTS (docs/operations.md, "Backfill"). Each
 * partition's messages are stored in the order they are given, whatever happens to the connection:
 * a partition has one publish in flight, and its next message goes only once JetStream has
 * acknowledged the previous one. A publish lost with the connection (a nats-server restart) times
 * out and is sent again with the same message id before anything after it on that partition;
 * partitions are published side by side, so P publishes are in flight.
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
  private readonly queues = new Map<number, M[]>();
  private readonly running = new Map<number, Promise<void>>();
  private queued = 0;
  private failure: Error | undefined;
  private roomWaiters: Array<() => void> = [];
  /** Acknowledged messages the stream already had (a re-run, or a resend whose first copy was stored). */
  duplicates = 0;
  /** Sends repeated after a retryable failure. */
  retries = 0;

  constructor(private readonly opts: OrderedPublisherOptions<M>) {}

  /** Queues `m` behind the earlier messages of its partition; resolves once there is room for more. */
  async publish(m: M): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    let q = this.queues.get(m.partition);
    if (!q) this.queues.set(m.partition, (q = []));
    q.push(m);
    this.queued++;
    if (!this.running.has(m.partition)) this.running.set(m.partition, this.run(m.partition, q));
    while (this.queued >= this.opts.maxQueued && this.failure === undefined)
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    if (this.failure !== undefined) throw this.failure;
  }

  /** Resolves once every message is acknowledged; rejects with the first failure. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
    if (this.failure !== undefined) throw this.failure;
  }

  private async run(partition: number, q: M[]): Promise<void> {
    while (q.length > 0 && this.failure === undefined) {
      try {
        await this.untilAcked(q[0] as M);
      } catch (err) {
        this.failure ??= this.opts.failed(q[0] as M, err);
        this.wakeAll();
        break;
      }
      q.shift();
      this.queued--;
      this.wakeAll();
    }
    this.running.delete(partition);
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

  private wakeAll(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }
}
