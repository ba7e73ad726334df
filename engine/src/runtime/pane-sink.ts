/**
 * The idempotent sinks (docs/semantics.md, "Policies are snapshot schedules"): TM_PANES and TM_LATE
 * messages, each a batch of what the core emitted for one input item on one subject, with a
 * `Nats-Msg-Id` fixed by that item's place in the log (emit-group.ts,
 * docs/decisions/0012-batched-transport.md).
 *
 * Publishes are pipelined with batched acks: each message goes out with a reply subject under
 * one wildcard inbox, and one subscription counts the stream's PubAcks as they come back — no
 * promise or timer per message (about 3× the rate of awaiting `js.publish` one by one here; see
 * docs/decisions/0006-engine-runtime.md). A publish not acknowledged within `ackTimeoutMs` (the
 * server restarted, the connection dropped, or only a status came back, such as 503 "no responders"
 * while no stream listens) or answered with an error is sent again with the same message id; the
 * stream deduplicates. `flush()` resolves once everything published before
 * it is acknowledged: a checkpoint waits for it, so it is never durable ahead of its panes. What
 * is unacknowledged is bounded in messages and in bytes.
 */
import { createInbox, headers, type Msg, type MsgHdrs, type Subscription } from "@nats-io/transport-node";

/** The two NATS calls the sink needs (NatsConnection satisfies it). */
export interface AckPublisher {
  publish(subject: string, payload: string | Uint8Array, opts: { reply: string; headers: MsgHdrs }): void;
  subscribe(subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }): Subscription;
}

/** Unacknowledged body length (bytes; UTF-16 units for a body given as text) at which the sink is saturated. */
export const MAX_IN_FLIGHT_UNITS = 64 * 1024 * 1024;

interface Pending {
  subject: string;
  body: string | Uint8Array;
  msgID: string;
  sentAt: number;
  epoch: number;
}

export class PaneSink {
  private readonly inbox = createInbox();
  private readonly pending = new Map<number, Pending>();
  private readonly perEpoch = new Map<number, number>();
  private readonly sub: Subscription;
  private readonly sweeper: NodeJS.Timeout;
  private next = 0;
  private epoch = 0;
  private units = 0;
  private flushWaiters: Array<{ epoch: number; resolve: () => void }> = [];
  private roomWaiters: Array<() => void> = [];
  /** Publishes acknowledged (duplicates included). */
  acked = 0;
  duplicates = 0;
  /** Publishes sent again after a timeout or an error reply. */
  retries = 0;
  /** Called for each publish the stream acknowledges, with its body, done with (pane-publisher.ts counts them). */
  onAcked: (body: string | Uint8Array) => void = () => undefined;
  /** The buffer of each acknowledged byte body, free for the next body (BodyBuffers). */
  onReturned: (buffer: ArrayBuffer) => void = () => undefined;

  constructor(
    private readonly nc: AckPublisher,
    private readonly maxInFlight: number,
    private readonly onError: (why: string, subject: string) => void = () => undefined,
    private readonly ackTimeoutMs = 5_000,
    private readonly maxInFlightUnits = MAX_IN_FLIGHT_UNITS,
  ) {
    this.sub = nc.subscribe(`${this.inbox}.*`, { callback: (_err, msg) => this.onAck(msg) });
    this.sweeper = setInterval(() => this.resendStale(), Math.max(100, ackTimeoutMs / 4));
    this.sweeper.unref();
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** True when the engine should stop producing until `room()` resolves. */
  get saturated(): boolean {
    return this.pending.size >= this.maxInFlight || this.units >= this.maxInFlightUnits;
  }

  /** Publishes one message; it is sent again with the same id until the stream acknowledges it. */
  publish(subject: string, body: string | Uint8Array, msgID: string): void {
    const p: Pending = { subject, body, msgID, sentAt: 0, epoch: this.epoch };
    this.perEpoch.set(p.epoch, (this.perEpoch.get(p.epoch) ?? 0) + 1);
    this.units += body.length;
    this.transmit(p);
  }

  /** Resolves once fewer than half of the bounds (messages and bytes) are pending. */
  room(): Promise<void> {
    if (this.roomy) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every publish issued before this call is acknowledged. */
  flush(): Promise<void> {
    const epoch = this.epoch++;
    if (this.settledThrough(epoch)) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push({ epoch, resolve }));
  }

  /** Stops listening for acks and resending; unacknowledged publishes are replayed from the log after a restart. */
  close(): void {
    clearInterval(this.sweeper);
    this.sub.unsubscribe();
  }

  private get roomy(): boolean {
    return this.pending.size < this.maxInFlight / 2 && this.units < this.maxInFlightUnits / 2;
  }

  private transmit(p: Pending): void {
    const token = this.next++;
    p.sentAt = Date.now();
    this.pending.set(token, p);
    const h = headers();
    h.set("Nats-Msg-Id", p.msgID);
    try {
      this.nc.publish(p.subject, p.body, { reply: `${this.inbox}.${token}`, headers: h });
    } catch (err) {
      // A closed or draining connection: leave it pending; the sweep sends it again.
      this.onError((err as Error).message, p.subject);
    }
  }

  private onAck(msg: Msg): void {
    const token = Number(msg.subject.slice(this.inbox.length + 1));
    const p = this.pending.get(token);
    if (!p) return; // an ack for a publish already resent under a newer token
    const text = msg.string();
    if (text === "" || (msg.headers?.code ?? 0) >= 300) {
      // A status reply, not a PubAck: 503 "no responders" when no stream listens on the subject
      // (a nats-server starting or stopping). Nothing was stored: it stays pending, and the sweep
      // sends it again (and says so) once stale: one resend per ack timeout while the stream is away.
      return;
    }
    this.pending.delete(token);
    if (text.includes('"error"')) {
      this.onError(`stream refused the publish: ${text}`, p.subject);
      this.retries++;
      this.transmit(p);
      return;
    }
    if (text.includes('"duplicate":true')) this.duplicates++;
    this.acked++;
    this.units -= p.body.length;
    this.settle(p.epoch);
    this.onAcked(p.body);
    if (typeof p.body !== "string") this.onReturned(p.body.buffer as ArrayBuffer);
  }

  private settle(epoch: number): void {
    const left = (this.perEpoch.get(epoch) ?? 1) - 1;
    if (left === 0) this.perEpoch.delete(epoch);
    else this.perEpoch.set(epoch, left);
    if (this.roomWaiters.length > 0 && this.roomy) {
      const waiters = this.roomWaiters;
      this.roomWaiters = [];
      for (const w of waiters) w();
    }
    if (this.flushWaiters.length > 0 && left === 0) {
      const waiting = this.flushWaiters;
      this.flushWaiters = [];
      for (const w of waiting) {
        if (this.settledThrough(w.epoch)) w.resolve();
        else this.flushWaiters.push(w);
      }
    }
  }

  private resendStale(): void {
    const cutoff = Date.now() - this.ackTimeoutMs;
    const stale: Array<[number, Pending]> = [];
    for (const entry of this.pending) if (entry[1].sentAt <= cutoff) stale.push(entry);
    if (stale.length === 0) return;
    this.onError(
      `${stale.length} publishes unacknowledged after ${this.ackTimeoutMs} ms; sending them again`,
      stale[0]?.[1].subject ?? "",
    );
    for (const [token, p] of stale) {
      this.pending.delete(token);
      this.retries++;
      this.transmit(p);
    }
  }

  private settledThrough(epoch: number): boolean {
    for (const e of this.perEpoch.keys()) if (e <= epoch) return false;
    return true;
  }
}
