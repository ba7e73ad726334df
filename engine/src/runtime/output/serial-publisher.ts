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
 * Backpressure (docs/decisions/0035-backpressure.md): attempt k waits for its ack at most its own
 * timeout, doubling per attempt with jitter (publish-backoff.ts); a failure sooner than that (no
 * responders, a closed connection) waits out the rest of it before the next attempt, so attempts
 * are spaced by the backoff however they fail. What waits is counted in messages and bytes, and
 * the publisher is `saturated` at its bound: the worker holds its input until `room()`.
 *
 * Runs (`join`, docs/decisions/0054-partial-runs.md): messages that waited behind the one in flight
 * go out together as one, when the owner says how to join them; a failed run is sent again as the
 * same run (the same body and id), so only a run's first attempt decides what it holds.
 *
 * Invariant: a message is handed to JetStream only once every message before it is acknowledged;
 * `flush()` resolves once everything published before it is acknowledged (a checkpoint waits).
 */
import type { MsgHdrs } from "@nats-io/transport-node";
import type { AckedPublish } from "../../nats/inbox-acks.js";
import type { PublishStats } from "./pane-sink.js";
import { ackTimeoutMs, PUBLISH_BACKOFF, type Backoff } from "./publish-backoff.js";
import { bodyBytes, type WindowLimits } from "./publish-window.js";
import { WaitingLine } from "./waiting-line.js";

interface Item {
  subject: string;
  body: Uint8Array;
  msgID: string;
  headers: MsgHdrs | undefined;
  bytes: number;
}

/** How waiting messages are sent as one (docs/decisions/0054-partial-runs.md). */
export interface JoinRule {
  /** Messages and body bytes one send holds at most (a message larger alone goes alone). */
  maxMessages: number;
  maxBytes: number;
  /** The body and message id of `items` sent as one (two or more, on one subject, without headers). */
  join(items: ReadonlyArray<{ body: Uint8Array; msgID: string }>): { body: Uint8Array; msgID: string };
}

/** What one attempt sends: the first `count` messages waiting, as one. */
interface Send extends Item {
  count: number;
}

/** One failed attempt, for the log. */
export interface RetryReport {
  why: string;
  subject: string;
  /** The attempt that failed (0: the first send). */
  attempt: number;
  /** Wall ms until the next attempt goes. */
  nextInMs: number;
  /** Messages unacknowledged, the failed one included. */
  queued: number;
}

export interface SerialPublisherOptions {
  /** At this many messages or bytes unacknowledged the publisher is saturated. */
  limits: WindowLimits;
  onRetry?: (r: RetryReport) => void;
  /** Absent: every message is sent alone. */
  join?: JoinRule;
  backoff?: Backoff;
  clock?: () => number;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export class SerialPublisher {
  /** Resends so far (one per failed attempt). */
  resends = 0;
  private readonly queue = new WaitingLine<Item>();
  private readonly o: Required<Omit<SerialPublisherOptions, "join">> & Pick<SerialPublisherOptions, "join">;
  /** What has been handed to JetStream and is not yet acknowledged (null: nothing). */
  private sending: Send | null = null;
  private running = false;
  private closed = false;
  private acked = 0;
  private queuedTotal = 0;
  private waiters: Array<{ upTo: number; resolve: () => void }> = [];
  private roomWaiters: Array<() => void> = [];

  constructor(
    /** Where a message goes and its ack comes from: InboxAcks, or a JetStreamClient. */
    private readonly transport: AckedPublish,
    opts: SerialPublisherOptions,
  ) {
    this.o = {
      onRetry: () => undefined,
      backoff: PUBLISH_BACKOFF,
      clock: Date.now,
      random: Math.random,
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      ...opts,
    };
  }

  /** Messages not yet acknowledged. */
  get queued(): number {
    return this.queue.length;
  }

  /** True at the bound (messages or bytes unacknowledged): the producer should wait for `room()`. */
  get saturated(): boolean {
    const q = this.queue.count();
    return q.messages >= this.o.limits.messages || q.bytes >= this.o.limits.bytes;
  }

  /** Resolves once under half of the bound. */
  room(): Promise<void> {
    if (this.roomy) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** The head in flight (one message, or one run), the rest waiting; the limits bound both together. */
  stats(): PublishStats {
    const q = this.queue.count();
    const inFlight = this.inFlight();
    const waiting = { messages: q.messages - inFlight.messages, bytes: q.bytes - inFlight.bytes };
    return { inFlight, waiting, limits: this.o.limits, resends: this.resends };
  }

  publish(subject: string, body: Uint8Array, msgID: string, headers?: MsgHdrs): void {
    const bytes = bodyBytes(body);
    this.queue.push({ subject, body, msgID, headers, bytes }, bytes);
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

  private get roomy(): boolean {
    const q = this.queue.count();
    return q.messages < this.o.limits.messages / 2 && q.bytes < this.o.limits.bytes / 2;
  }

  private async run(): Promise<void> {
    this.running = true;
    let attempt = 0;
    let send: Send | null = null;
    for (let head = this.queue.peek(); head !== undefined && !this.closed; head = this.queue.peek()) {
      send ??= this.next(head);
      if (!(await this.attempt(send, attempt))) {
        attempt++;
        continue;
      }
      attempt = 0;
      for (let i = 0; i < send.count; i++) this.queue.shift((this.queue.peek() as Item).bytes);
      this.acked += send.count;
      send = null;
      this.waiters = this.waiters.filter((w) => (w.upTo <= this.acked ? (w.resolve(), false) : true));
      if (this.roomWaiters.length > 0 && this.roomy) for (const w of this.roomWaiters.splice(0)) w();
    }
    this.running = false;
  }

  /** What goes next: the head alone, or with the messages behind it as one run (`join`). */
  private next(head: Item): Send {
    const rule = this.o.join;
    let count = 1;
    let bytes = head.body.length;
    if (rule !== undefined && head.headers === undefined)
      for (let it = this.queue.at(count); it !== undefined && count < rule.maxMessages; it = this.queue.at(++count)) {
        if (it.headers !== undefined || it.subject !== head.subject || bytes + it.body.length > rule.maxBytes) break;
        bytes += it.body.length;
      }
    if (count === 1) return { ...head, count };
    const items = Array.from({ length: count }, (_, i) => this.queue.at(i) as Item);
    const { body, msgID } = (rule as JoinRule).join(items);
    const queued = items.reduce((n, it) => n + it.bytes, 0);
    return { subject: head.subject, body, msgID, headers: undefined, bytes: queued, count };
  }

  private inFlight(): { messages: number; bytes: number } {
    return this.sending === null
      ? { messages: 0, bytes: 0 }
      : { messages: this.sending.count, bytes: this.sending.bytes };
  }

  /** One attempt at the head (or its run): true once acknowledged; false after its timeout has run out. */
  private async attempt(head: Send, attempt: number): Promise<boolean> {
    const timeout = ackTimeoutMs(attempt, this.o.backoff, this.o.random);
    const t0 = this.o.clock();
    this.sending = head;
    try {
      const opts = { msgID: head.msgID, timeout };
      await this.transport.publish(head.subject, head.body, head.headers ? { ...opts, headers: head.headers } : opts);
      return true;
    } catch (err) {
      this.resends++;
      const left = Math.max(0, timeout - (this.o.clock() - t0));
      const why = (err as Error).message;
      this.o.onRetry({ why, subject: head.subject, attempt, nextInMs: left, queued: this.queue.length });
      if (left > 0) await this.o.sleep(left);
      return false;
    } finally {
      this.sending = null;
    }
  }
}
