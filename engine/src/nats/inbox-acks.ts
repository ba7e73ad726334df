/**
 * InboxAcks: JetStream publishes acknowledged through one wildcard inbox subscription: the
 * engine's TM_PARTIALS chains (runtime/output/serial-publisher.ts) and ingest's TM_EVENTS batches.
 * Each publish goes out with a reply subject under the inbox and resolves when the stream's PubAck
 * comes back there, or fails (pub-ack.ts reads the reply): a status reply (503 "no responders": no
 * stream on the subject), a PubAck with an error (the stream refused it) or no answer within its
 * timeout. That is what `JetStreamClient.publish` does, without its per-publish request object,
 * whose end builds an Error with a stack trace whether it was answered or not (the engine's pane
 * sink acknowledges the same way, runtime/output/pane-sink.ts; docs/decisions/0006-engine-runtime.md).
 *
 * Invariant: every publish settles exactly once; a reply for a publish already settled (its timeout
 * ran out, a later attempt was sent) is dropped. The subscription is made at the first publish.
 */
import { createInbox, headers, type Msg, type MsgHdrs, type Subscription } from "@nats-io/transport-node";
import { pubAckOf } from "./pub-ack.js";

/** Publishing one message and waiting for its acknowledgement (JetStreamClient satisfies it). */
export interface AckedPublish {
  publish(
    subject: string,
    body: Uint8Array | undefined,
    opts: { msgID?: string; timeout: number; headers?: MsgHdrs },
  ): Promise<unknown>;
}

/** The NATS calls InboxAcks needs (NatsConnection satisfies it). */
export interface InboxTransport {
  publish(subject: string, payload: Uint8Array | undefined, opts: { reply: string; headers: MsgHdrs }): void;
  subscribe(subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }): Subscription;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class InboxAcks implements AckedPublish {
  private readonly inbox = createInbox();
  private readonly waiting = new Map<number, Waiter>();
  private sub: Subscription | null = null;
  private next = 0;

  constructor(private readonly nc: InboxTransport) {}

  /** Publishes `body` (with its `Nats-Msg-Id` when given); settles as the file comment says. */
  publish(
    subject: string,
    body: Uint8Array | undefined,
    opts: { msgID?: string; timeout: number; headers?: MsgHdrs },
  ): Promise<void> {
    const token = this.next++;
    const h = opts.headers ?? headers();
    if (opts.msgID !== undefined) h.set("Nats-Msg-Id", opts.msgID);
    return new Promise<void>((resolve, reject) => {
      // Unref'd: a publish nobody awaits any more (the role stopping) does not hold the process.
      const timer = setTimeout(
        () => this.settle(token, new Error(`no acknowledgement within ${opts.timeout} ms`)),
        opts.timeout,
      ).unref();
      this.waiting.set(token, { resolve, reject, timer });
      try {
        this.sub ??= this.nc.subscribe(`${this.inbox}.*`, { callback: (_err, msg) => this.onReply(msg) });
        this.nc.publish(subject, body, { reply: `${this.inbox}.${token}`, headers: h });
      } catch (err) {
        // A closed or draining connection: the promise fails, the call never throws.
        this.settle(token, err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /** Stops listening: what waits fails ("closed"); the serial publisher stops sending at its close. */
  close(): void {
    this.sub?.unsubscribe();
    this.sub = null;
    for (const token of [...this.waiting.keys()]) this.settle(token, new Error("closed"));
  }

  private onReply(msg: Msg): void {
    const token = Number(msg.subject.slice(this.inbox.length + 1));
    if (!this.waiting.has(token)) return;
    const reply = pubAckOf(msg);
    if (reply.kind === "acked") return this.settle(token);
    if (reply.kind === "refused") return this.settle(token, new Error(`stream refused the publish: ${reply.text}`));
    const why = reply.code === 503 ? "no responders" : `status ${reply.code} ${reply.description}`;
    this.settle(token, new Error(why));
  }

  private settle(token: number, err?: Error): void {
    const w = this.waiting.get(token);
    if (w === undefined) return;
    this.waiting.delete(token);
    clearTimeout(w.timer);
    if (err === undefined) w.resolve();
    else w.reject(err);
  }
}
