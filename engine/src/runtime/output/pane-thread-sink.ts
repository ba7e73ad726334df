/**
 * PaneThreadSink: the engine's sink (the PaneSink surface: publish, saturated, room, flush,
 * inFlight, acked, stats, close) with the publishing itself on the pane publisher thread
 * (pane-publisher.ts, docs/decisions/0017-engine-throughput.md). The main thread keeps the core;
 * the thread the socket writes, the client's framing, the acks and the resends. The guarantees stay
 * where they were stated (pane-sink.ts): the bodies and message ids are the main thread's, a port
 * delivers in order, so a flush answered by the thread covers every publish posted before it (a
 * checkpoint is never durable ahead of its panes); the window on what is unacknowledged, in
 * messages and in bytes (docs/decisions/0035-backpressure.md), is kept here, from the
 * acknowledgements the thread reports: a message the window does not admit waits here, in order.
 */
import { Worker } from "node:worker_threads";
import type { FromPublisher, PublisherOptions, ToPublisher } from "./pane-publisher.js";
import { bodyBytes, publishStats, PublishWindow, type PublishStats, type WindowLimits } from "./publish-window.js";
import type { SweepReport } from "./resend-sweep.js";
import { WaitingLine } from "./waiting-line.js";

/** The main thread's end of the port (a Worker or a MessageChannel end). */
export interface PublisherPort {
  postMessage(m: ToPublisher, transfer?: ArrayBuffer[]): void;
  on(event: "message", listener: (m: FromPublisher) => void): void;
}

interface Waiting {
  subject: string;
  body: Uint8Array;
  msgId: string;
  bytes: number;
}

export class PaneThreadSink {
  readonly window: PublishWindow;
  private readonly waiting = new WaitingLine<Waiting>();
  private nextFlush = 0;
  private readonly flushes = new Map<number, () => void>();
  /** Messages handed to `publish` so far, and posted to the thread so far. */
  private enqueued = 0;
  private posted = 0;
  /** Flushes to post once the messages before them are posted (a port delivers in order). */
  private flushesAfter: Array<{ upTo: number; id: number }> = [];
  private roomWaiters: Array<() => void> = [];
  private closed = false;
  /** Publishes acknowledged (duplicates included). */
  acked = 0;
  /** Publishes the thread sent again. */
  resends = 0;
  /** The buffer of each acknowledged body, back from the thread, free for the next body (BodyBuffers). */
  onReturned: (buffer: ArrayBuffer) => void = () => undefined;
  /** Each resend sweep of the thread's sink (pane-sink.ts), for the log. */
  onSweep: (r: SweepReport & { inFlight: number }) => void = () => undefined;

  constructor(
    private readonly port: PublisherPort,
    limits: WindowLimits,
    private readonly onError: (why: string, subject: string) => void = () => undefined,
    private readonly onClose: () => void = () => undefined,
  ) {
    this.window = new PublishWindow(limits);
    port.on("message", (m) => this.onMessage(m));
  }

  /** Starts the publisher thread (dist/runtime/output/pane-publisher.js) with its own connection to `natsUrl`. */
  static start(
    opts: PublisherOptions,
    onError: (why: string, subject: string) => void = () => undefined,
  ): PaneThreadSink {
    const worker = new Worker(new URL("./pane-publisher.js", import.meta.url), {
      workerData: { panePublisher: opts },
    });
    worker.on("error", (err) => onError(`pane publisher thread failed: ${err.message}`, ""));
    worker.on("exit", (code) => {
      if (code !== 0) onError(`pane publisher thread exited with code ${code}: panes wait for a restart`, "");
    });
    const stop = (): void => {
      // It drains its connection and ends; a stuck drain is cut short.
      setTimeout(() => void worker.terminate(), 5_000).unref();
      worker.unref();
    };
    const limits = { messages: opts.maxInFlight, bytes: opts.maxInFlightBytes };
    return new PaneThreadSink(worker as unknown as PublisherPort, limits, onError, stop);
  }

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

  /**
   * Hands one message to the thread, now or once the window admits it. The body's buffer goes
   * with it (transferred, not copied: a body at offset 0 of its buffer is taken to own it, as
   * JsonLines' bodies do); a body further into a buffer is copied.
   */
  publish(subject: string, body: Uint8Array, msgId: string): void {
    const own = body.byteOffset === 0 && body.buffer instanceof ArrayBuffer ? body : body.slice();
    const m: Waiting = { subject, body: own, msgId, bytes: bodyBytes(own) };
    this.enqueued++;
    if (this.waiting.length === 0 && this.window.admits(m.bytes)) this.post(m);
    else this.waiting.push(m, m.bytes);
  }

  /** Resolves once nothing waits and fewer than half of the window's bounds are in flight. */
  room(): Promise<void> {
    if (this.roomy) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every publish issued before this call is acknowledged. */
  flush(): Promise<void> {
    if (this.window.messages === 0 && this.waiting.length === 0) return Promise.resolve();
    const id = this.nextFlush++;
    return new Promise((resolve) => {
      this.flushes.set(id, resolve);
      if (this.posted >= this.enqueued) this.port.postMessage({ t: "flush", id });
      else this.flushesAfter.push({ upTo: this.enqueued, id });
    });
  }

  /** Stops the thread once it has handled what was posted; unacknowledged publishes are replayed from the log after a restart. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.postMessage({ t: "close" });
    this.onClose();
  }

  private get roomy(): boolean {
    return this.waiting.length === 0 && this.window.roomy;
  }

  private post(m: Waiting): void {
    this.window.add(m.bytes);
    this.port.postMessage({ t: "publish", subject: m.subject, msgId: m.msgId, body: m.body }, [
      m.body.buffer as ArrayBuffer,
    ]);
    this.posted++;
    while (this.flushesAfter.length > 0 && (this.flushesAfter[0] as { upTo: number }).upTo <= this.posted)
      this.port.postMessage({ t: "flush", id: (this.flushesAfter.shift() as { id: number }).id });
  }

  /** Posts what waits, in order, while the window admits it. */
  private admitWaiting(): void {
    for (let m = this.waiting.peek(); m !== undefined && this.window.admits(m.bytes); m = this.waiting.peek()) {
      this.waiting.shift(m.bytes);
      this.post(m);
    }
  }

  private onMessage(m: FromPublisher): void {
    if (m.t === "acked") {
      this.window.messages -= m.n;
      this.window.bytes -= m.bytes;
      this.acked += m.n;
      for (const b of m.buffers) this.onReturned(b);
      this.admitWaiting();
      if (this.roomWaiters.length > 0 && this.roomy) {
        const waiters = this.roomWaiters;
        this.roomWaiters = [];
        for (const w of waiters) w();
      }
    } else if (m.t === "flushed") {
      this.flushes.get(m.id)?.();
      this.flushes.delete(m.id);
    } else if (m.t === "sweep") {
      this.resends += m.report.resent;
      this.onSweep(m.report);
    } else if (m.t === "error") this.onError(m.why, m.subject);
  }
}
