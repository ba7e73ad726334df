/**
 * Follows TM_PANES with a durable pull consumer (docs/remote-write.md, "Resuming"): explicit acks,
 * so a message stays unacknowledged — and is delivered again after a restart — until every sample
 * of its settled panes was accepted, refused or dropped. Waits while TM_PANES does not exist.
 */
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JsMsg,
} from "@nats-io/jetstream";
import { STREAM_PANES, type Pane } from "@tidemark/engine/protocol";
import type { Logger } from "pino";
import { readPaneBody } from "../pane-body-read.js";

/** One TM_PANES message: its stream sequence and its panes. */
export interface PaneMessage {
  readonly seq: number;
  readonly panes: readonly Pane[];
  readonly redelivered: boolean;
}

export interface ReaderOptions {
  readonly consumer: string;
  readonly ackWaitMs: number;
  /** Messages delivered and not yet acknowledged at most. */
  readonly maxAckPending: number;
  readonly retryMs: number;
}

export class PaneReader {
  private readonly handles = new Map<number, JsMsg>();
  private messages: ConsumerMessages | undefined;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: ReaderOptions,
    private readonly log: Logger,
  ) {}

  /** Messages not yet acknowledged. */
  get held(): number {
    return this.handles.size;
  }

  /** Reads until closed, handing each new message to `take` (awaited: backpressure). */
  async run(take: (m: PaneMessage) => Promise<void>): Promise<void> {
    while (!this.closed) {
      try {
        await this.consumeOnce(take);
      } catch (err) {
        if (this.closed) break;
        this.log.warn({ err: (err as Error).message }, "TM_PANES consumer ended; opening it again");
        await sleep(this.opts.retryMs);
      }
    }
  }

  /** Acknowledges messages by stream sequence (those whose samples are all done). */
  ack(seqs: readonly number[]): void {
    for (const seq of seqs) {
      this.handles.get(seq)?.ack();
      this.handles.delete(seq);
    }
  }

  close(): void {
    this.closed = true;
    void this.messages?.close().catch(() => undefined);
  }

  private async consumeOnce(take: (m: PaneMessage) => Promise<void>): Promise<void> {
    if (!(await this.ensureConsumer())) return;
    const consumer = await jetstream(this.nc).consumers.get(STREAM_PANES, this.opts.consumer);
    const messages = await consumer.consume({ max_messages: 64, expires: 2000 });
    this.messages = messages;
    void this.closeWhenSilent(messages);
    for await (const m of messages) {
      if (this.closed) break;
      const known = this.handles.has(m.seq);
      // A redelivery (past ackWait) of a message still held: keep the newest delivery to acknowledge.
      this.handles.set(m.seq, m);
      if (known) continue;
      await take({ seq: m.seq, panes: this.panesOf(m), redelivered: m.redelivered });
    }
  }

  /** Creates the durable consumer when missing; false (after a wait) while TM_PANES does not exist. */
  private async ensureConsumer(): Promise<boolean> {
    const jsm = await jetstreamManager(this.nc);
    const stream = await jsm.streams.info(STREAM_PANES).catch((err: Error) => {
      if (/not found/i.test(err.message)) return undefined;
      throw err;
    });
    if (!stream) {
      this.log.info({ stream: STREAM_PANES }, "waiting for the stream to exist");
      await sleep(this.opts.retryMs);
      return false;
    }
    const existing = await jsm.consumers.info(STREAM_PANES, this.opts.consumer).catch(() => undefined);
    // Delivered but unacknowledged messages would come again only after ackWait, behind newer ones
    // (out of order per series): the consumer is made anew from its ack floor instead. Messages
    // acknowledged past the floor come again and are skipped as resent.
    const floor = existing?.ack_floor.stream_seq;
    if (existing) await jsm.consumers.delete(STREAM_PANES, this.opts.consumer);
    await jsm.consumers.add(STREAM_PANES, {
      durable_name: this.opts.consumer,
      ack_policy: AckPolicy.Explicit,
      ...(floor === undefined
        ? { deliver_policy: DeliverPolicy.All }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: floor + 1 }),
      ack_wait: nanos(this.opts.ackWaitMs),
      max_ack_pending: this.opts.maxAckPending,
    });
    this.log.info(
      { consumer: this.opts.consumer, from: floor === undefined ? "the stream's first pane" : floor + 1 },
      floor === undefined ? "created the durable consumer" : "resuming the durable consumer after its ack floor",
    );
    return true;
  }

  /** The panes of a message, decoded once to objects (no JSON text is needed here). */
  private panesOf(m: JsMsg): Pane[] {
    let body;
    try {
      body = readPaneBody(m.data);
    } catch (err) {
      // A body this version cannot read (docs/protocol.md, "Versions"): logged, its panes not written.
      this.log.warn(
        { seq: m.seq, err: (err as Error).message },
        "skipping a TM_PANES message whose body does not decode",
      );
      return [];
    }
    for (const why of body.rejected)
      this.log.warn({ seq: m.seq, err: why }, "skipping a TM_PANES line that is not a pane");
    return body.panes.map((p) => p.pane);
  }

  /** A consumer whose server went away shows as missed heartbeats: close it, `run` opens it again. */
  private async closeWhenSilent(messages: ConsumerMessages): Promise<void> {
    for await (const s of messages.status()) {
      if (s.type !== "heartbeats_missed") continue;
      await messages.close().catch(() => undefined);
      return;
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
