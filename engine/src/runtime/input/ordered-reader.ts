/**
 * OrderedReader: one subject of a stream read in stream order from a sequence the reader owns (a
 * checkpoint keeps it: there is no server-side ack state). When the consumer fails (the server
 * restarted, the connection dropped) or misses its heartbeats, it is created again from the last
 * sequence seen + 1, so every message is handed on once, in order, per incarnation of the reader.
 * PartitionSource (TM_EVENTS) and the merge stage's PartialsSource (TM_PARTIALS) read through it.
 *
 * Held input (docs/decisions/0035-backpressure.md, "Input"): after each message the reader waits
 * while its owner says so. The client pulls MAX_MESSAGES at a time and sends the next pull only as
 * the iterator is read, so a held reader buffers at most one pull; but a pull that has run out
 * sends no heartbeats, and the client would count them missed and pull again on its own. A hold
 * longer than PARK_AFTER_MS therefore parks the reader: its consumer is closed (the messages it
 * buffered are still handed on) and deleted, and once the hold ends a new one starts from the last
 * sequence + 1. Heartbeats missed while held are not a fault.
 */
import {
  DeliverPolicy,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
} from "@nats-io/jetstream";

export interface OrderedReaderHandlers {
  /** One message, in stream order. */
  message(m: JsMsg): void;
  /** A promise to wait on before reading further (backpressure), or undefined. */
  backpressure(): Promise<void> | undefined;
  /** A consumer failure (retried). */
  problem(what: string, err: unknown): void;
}

const RETRY_MS = 500;
/** Messages per pull (a pull is bounded in messages only: byte-bounded pulls stall on nats-server 2.9, ADR 0035). */
const MAX_MESSAGES = 128;
/** Under the ~2 s after which the client counts a silent pull's heartbeats missed. */
export const PARK_AFTER_MS = 1_000;

export class OrderedReader {
  private lastSeq: number;
  private stopped = false;
  private restarting = false;
  /** Waiting on the owner's backpressure. */
  private holding = false;
  /** The consumer was closed during a hold: a new one starts once it ends, without the retry pause. */
  private parked = false;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private readonly subject: string,
    /** What the problems call it ("partition 3", "TM_PARTIALS"). */
    private readonly name: string,
    /** Sequence of the last message already accounted for (0: read from the beginning). */
    fromSeq: number,
    private readonly on: OrderedReaderHandlers,
  ) {
    this.lastSeq = fromSeq;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Drops the current consumer and creates a new one from the last sequence seen + 1. */
  restart(): void {
    this.restarting = true;
    void this.messages?.close().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.messages?.close().catch(() => undefined);
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.consumeOnce();
      } catch (err) {
        if (this.stopped) return;
        this.on.problem(`consumer of ${this.name} failed; recreating it from sequence ${this.lastSeq + 1}`, err);
      }
      if (!this.stopped && !this.restarting && !this.parked) await new Promise((r) => setTimeout(r, RETRY_MS));
      this.restarting = false;
      this.parked = false;
    }
  }

  private async recreateWhenSilent(messages: ConsumerMessages): Promise<void> {
    for await (const s of messages.status()) {
      if (s.type !== "heartbeats_missed" || this.holding) continue;
      this.on.problem(
        `consumer of ${this.name} missed its heartbeats; recreating it from sequence ${this.lastSeq + 1}`,
        undefined,
      );
      await messages.close().catch(() => undefined);
      return;
    }
  }

  private async consumeOnce(): Promise<void> {
    const from = this.lastSeq + 1;
    const consumer = await this.js.consumers.get(this.stream, {
      filter_subjects: this.subject,
      ...(from > 1
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }
        : { deliver_policy: DeliverPolicy.All }),
    });
    // Short pulls, so a consumer whose server died shows as missed heartbeats within ~2 s; the
    // ordered consumer would keep pulling from it forever, so it is recreated (a NATS cluster
    // node lost: docs/operations.md, "Running past one machine"; test/src/cluster).
    const messages = await consumer.consume({ max_messages: MAX_MESSAGES, expires: 2000 });
    void this.recreateWhenSilent(messages);
    this.messages = messages;
    if (this.stopped) {
      // Stopped while the consumer was being created: close it without waiting, since its close
      // resolves only once iterated, and nothing will iterate it now.
      void messages.close().catch(() => undefined);
      return;
    }
    for await (const m of messages) {
      if (m.seq <= this.lastSeq) continue;
      this.lastSeq = m.seq;
      this.on.message(m);
      const wait = this.on.backpressure();
      if (wait) await this.hold(wait, messages, consumer);
      if (this.stopped) break;
    }
  }

  /** Waits out the owner's hold; one past PARK_AFTER_MS closes and deletes the consumer (parks). */
  private async hold(wait: Promise<void>, messages: ConsumerMessages, consumer: Consumer): Promise<void> {
    this.holding = true;
    let timer: NodeJS.Timeout | undefined;
    const park = new Promise<boolean>((r) => (timer = setTimeout(() => r(true), PARK_AFTER_MS)));
    try {
      if (await Promise.race([wait.then(() => false), park])) {
        this.parked = true;
        void messages.close().catch(() => undefined);
        void consumer.delete().catch(() => undefined);
        await wait;
      }
    } finally {
      clearTimeout(timer);
      this.holding = false;
    }
  }
}
