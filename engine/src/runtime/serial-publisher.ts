/**
 * SerialPublisher: publishes to JetStream one message at a time, each awaited before the next,
 * so the stream stores them in the order given even across failures (a publish that fails is sent
 * again, with the same message id, before anything after it). The stage-1 partial batches need
 * this: the merge stage takes a worker's batches as a chain and calls one that ends behind what it
 * already has a duplicate (docs/decisions/0029-two-stage-dataflow.md, "Wire"); the pane sink's
 * pipelined publishes and resends can reorder. Ten batches a second per worker leave room for one
 * round trip each. (The backfill's OrderedPublisher, deploy/src/nats, pipelines across partitions
 * and fails a run after a while; this one has one chain and retries for as long as the worker runs.)
 *
 * Invariant: a message is handed to JetStream only once every message before it is acknowledged;
 * `flush()` resolves once everything published before it is acknowledged (a checkpoint waits).
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";

interface Item {
  subject: string;
  body: Uint8Array;
  msgID: string;
  headers: MsgHdrs | undefined;
}

const RETRY_MS = 500;

export class SerialPublisher {
  private readonly queue: Item[] = [];
  private running = false;
  private closed = false;
  private acked = 0;
  private queuedTotal = 0;
  private waiters: Array<{ upTo: number; resolve: () => void }> = [];

  constructor(
    private readonly js: Pick<JetStreamClient, "publish">,
    private readonly onError: (why: string, subject: string) => void = () => undefined,
    private readonly ackTimeoutMs = 5_000,
  ) {}

  /** Messages not yet acknowledged. */
  get queued(): number {
    return this.queue.length;
  }

  publish(subject: string, body: Uint8Array, msgID: string, headers?: MsgHdrs): void {
    this.queue.push({ subject, body, msgID, headers });
    this.queuedTotal++;
    if (!this.running) void this.run();
  }

  /** Resolves once every message published so far is acknowledged. */
  flush(): Promise<void> {
    if (this.acked >= this.queuedTotal) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ upTo: this.queuedTotal, resolve }));
  }

  /** Stops sending; what is unacknowledged stays unsent (the log replays it). */
  close(): void {
    this.closed = true;
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0 && !this.closed) {
      const head = this.queue[0] as Item;
      try {
        const opts = { msgID: head.msgID, timeout: this.ackTimeoutMs };
        await this.js.publish(head.subject, head.body, head.headers ? { ...opts, headers: head.headers } : opts);
      } catch (err) {
        this.onError((err as Error).message, head.subject);
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      this.queue.shift();
      this.acked++;
      this.waiters = this.waiters.filter((w) => (w.upTo <= this.acked ? (w.resolve(), false) : true));
    }
    this.running = false;
  }
}
