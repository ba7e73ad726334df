/**
 * The idempotent sinks (docs/semantics.md, "Policies are snapshot schedules"): TM_PANES and TM_LATE
 * messages, each a batch of what the core emitted for one input item on one subject, with a
 * `Nats-Msg-Id` fixed by that item's place in the log (emit-group.ts,
 * docs/decisions/0012-batched-transport.md).
 *
 * Publishes are pipelined with batched acks: each message goes out with a reply subject under
 * one wildcard inbox, and one subscription counts the stream's PubAcks as they come back — no
 * promise or timer per message (docs/decisions/0006-engine-runtime.md). `flush()` resolves once
 * everything published before it is acknowledged: a checkpoint waits for it, so it is never
 * durable ahead of its panes.
 *
 * Backpressure (docs/decisions/0035-backpressure.md): what is in flight stays within a window of
 * messages and bytes (publish-window.ts); a message the window does not admit waits here, in
 * order, and the sink is `saturated` while anything waits or the window is full, so the engine
 * holds its input. A publish not acknowledged within its own timeout, doubling per attempt with
 * jitter (publish-backoff.ts), or refused by the stream, is sent again with the same message id
 * and reply subject (an ack of any attempt acknowledges it; the stream deduplicates), a bounded
 * number per sweep (resend-sweep.ts), and only once the server has read what was sent before
 * (a PING answered): a server that reads nothing is not sent copies.
 */
import { createInbox, headers, type Msg, type MsgHdrs, type Subscription } from "@nats-io/transport-node";
import { pubAckOf } from "../../nats/pub-ack.js";
import { ackTimeoutMs, PUBLISH_BACKOFF, type Backoff } from "./publish-backoff.js";
import { bodyBytes, publishStats, PublishWindow, type PublishStats, type WindowLimits } from "./publish-window.js";
import { RESEND_PER_SWEEP, SWEEP_MS, sweepDue, type Resendable, type SweepReport } from "./resend-sweep.js";
import { ReportPace } from "./report-pace.js";
import { WaitingLine } from "./waiting-line.js";

/** The NATS calls the sink needs (NatsConnection satisfies it). */
export interface AckPublisher {
  publish(subject: string, payload: string | Uint8Array, opts: { reply: string; headers: MsgHdrs }): void;
  subscribe(subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }): Subscription;
  /** Resolves once the server has read everything written before (a PING answered). */
  flush?(): Promise<void>;
}

/** The default window: bytes of unacknowledged bodies (engine.maxInFlightBytes). */
export const MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024;

export type { PublishStats } from "./publish-window.js";

export interface PaneSinkOptions {
  limits: WindowLimits;
  /** A stream refused a publish (it goes again after its timeout). */
  onError?: (why: string, subject: string) => void;
  /** One report per sweep that sent publishes again (or, at most every 5 s, found the server not reading). */
  onSweep?: (r: SweepReport & { inFlight: number }) => void;
  backoff?: Backoff;
  sweepEveryMs?: number;
  clock?: () => number;
  random?: () => number;
}

interface Pending extends Resendable {
  subject: string;
  body: string | Uint8Array;
  msgID: string;
  epoch: number;
  token: number;
}

export class PaneSink {
  readonly window: PublishWindow;
  private readonly inbox = createInbox();
  private readonly pending = new Map<number, Pending>();
  private readonly waiting = new WaitingLine<Pending>();
  private readonly perEpoch = new Map<number, number>();
  private readonly sub: Subscription;
  private readonly sweeper: NodeJS.Timeout;
  private readonly o: Required<Omit<PaneSinkOptions, "limits">>;
  private readonly pace = new ReportPace(5_000);
  private next = 0;
  private epoch = 0;
  /** A PING sent after the last resends is unanswered: the server has not read them yet. */
  private probing = false;
  private flushWaiters: Array<{ epoch: number; resolve: () => void }> = [];
  private roomWaiters: Array<() => void> = [];
  /** Publishes acknowledged (duplicates included). */
  acked = 0;
  duplicates = 0;
  /** Publishes sent again (after their timeout, or refused). */
  resends = 0;
  /** Called for each publish the stream acknowledges, with its body, done with (pane-publisher.ts counts them). */
  onAcked: (body: string | Uint8Array, bytes: number) => void = () => undefined;
  /** The buffer of each acknowledged byte body, free for the next body (BodyBuffers). */
  onReturned: (buffer: ArrayBuffer) => void = () => undefined;

  constructor(
    private readonly nc: AckPublisher,
    opts: PaneSinkOptions,
  ) {
    this.window = new PublishWindow(opts.limits);
    this.o = {
      onError: () => undefined,
      onSweep: () => undefined,
      backoff: PUBLISH_BACKOFF,
      sweepEveryMs: SWEEP_MS,
      clock: Date.now,
      random: Math.random,
      ...opts,
    };
    this.sub = nc.subscribe(`${this.inbox}.*`, { callback: (_err, msg) => this.onAck(msg) });
    this.sweeper = setInterval(() => this.sweep(), this.o.sweepEveryMs);
    this.sweeper.unref();
  }

  /** Publishes sent and not yet acknowledged. */
  get inFlight(): number {
    return this.window.messages;
  }

  /** True when the engine should stop producing until `room()` resolves. */
  get saturated(): boolean {
    return this.waiting.length > 0 || this.window.full;
  }

  stats(): PublishStats {
    return publishStats(this.window, this.waiting, this.resends);
  }

  /** Publishes one message (now, or once the window admits it); it is sent until the stream acknowledges it. */
  publish(subject: string, body: string | Uint8Array, msgID: string): void {
    const p: Pending = {
      subject,
      body,
      msgID,
      epoch: this.epoch,
      token: -1,
      attempt: 0,
      dueAt: 0,
      bytes: bodyBytes(body),
    };
    this.perEpoch.set(p.epoch, (this.perEpoch.get(p.epoch) ?? 0) + 1);
    if (this.waiting.length === 0 && this.window.admits(p.bytes)) this.send(p);
    else this.waiting.push(p, p.bytes);
  }

  /** Resolves once nothing waits and fewer than half of the window's bounds are in flight. */
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
    return this.waiting.length === 0 && this.window.roomy;
  }

  private send(p: Pending): void {
    this.window.add(p.bytes);
    p.token = this.next++;
    p.dueAt = this.o.clock() + ackTimeoutMs(0, this.o.backoff, this.o.random);
    this.pending.set(p.token, p);
    this.transmit(p);
  }

  private transmit(p: Pending): void {
    const h = headers();
    h.set("Nats-Msg-Id", p.msgID);
    try {
      this.nc.publish(p.subject, p.body, { reply: `${this.inbox}.${p.token}`, headers: h });
    } catch (err) {
      // A closed or draining connection: it stays pending; a sweep sends it again.
      this.o.onError((err as Error).message, p.subject);
    }
  }

  private onAck(msg: Msg): void {
    const p = this.pending.get(Number(msg.subject.slice(this.inbox.length + 1)));
    if (!p) return; // a second ack (of another attempt) of a publish already acknowledged
    const reply = pubAckOf(msg);
    // A status reply, not a PubAck (503 "no responders"): nothing was stored, it stays pending until its timeout.
    if (reply.kind === "status") return;
    if (reply.kind === "refused") {
      this.o.onError(`stream refused the publish: ${reply.text}`, p.subject);
      p.dueAt = this.o.clock() + ackTimeoutMs(p.attempt, this.o.backoff, this.o.random);
      return;
    }
    this.pending.delete(p.token);
    this.window.remove(p.bytes);
    if (reply.duplicate) this.duplicates++;
    this.acked++;
    this.onAcked(p.body, p.bytes);
    if (typeof p.body !== "string") this.onReturned(p.body.buffer as ArrayBuffer);
    this.admitWaiting();
    this.settle(p.epoch);
  }

  /** Sends what waits, in order, while the window admits it. */
  private admitWaiting(): void {
    for (let p = this.waiting.peek(); p !== undefined && this.window.admits(p.bytes); p = this.waiting.peek()) {
      this.waiting.shift(p.bytes);
      this.send(p);
    }
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

  /** Sends again the earliest due publishes (a bounded number), once the server has read the last ones. */
  private sweep(): void {
    if (this.pending.size === 0) return;
    const now = this.o.clock();
    if (this.probing) {
      const due = [...this.pending.values()].filter((p) => p.dueAt <= now).length;
      if (due > 0 && this.pace.due(now))
        this.report({ resent: 0, resentBytes: 0, deferred: due, maxAttempt: 0, oldestDueMs: 0 });
      return;
    }
    const { resend, report } = sweepDue(this.pending.values(), now, RESEND_PER_SWEEP, this.o.backoff, this.o.random);
    if (resend.length === 0) return;
    for (const p of resend) this.transmit(p);
    this.resends += resend.length;
    this.probe();
    this.pace.due(now);
    this.report(report);
  }

  /** A PING after the resends: until it is answered the server has not read them, and no more go. */
  private probe(): void {
    if (!this.nc.flush) return;
    this.probing = true;
    const done = (): void => void (this.probing = false);
    this.nc.flush().then(done, done);
  }

  private report(r: SweepReport): void {
    this.o.onSweep({ ...r, inFlight: this.window.messages });
  }

  private settledThrough(epoch: number): boolean {
    for (const e of this.perEpoch.keys()) if (e <= epoch) return false;
    return true;
  }
}
