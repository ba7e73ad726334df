/**
 * PaneThreadSink: the engine's sink (the PaneSink surface: publish, saturated, room, flush,
 * inFlight, acked, close) with the publishing itself on the pane publisher thread
 * (pane-publisher.ts, docs/decisions/0017-engine-throughput.md). The main thread keeps the core;
 * the thread the socket writes, the client's framing and the acks. The guarantees stay where
 * they were stated (pane-sink.ts): the bodies and message ids are the main thread's, a port
 * delivers in order, so a flush answered by the thread covers every publish posted before it (a
 * checkpoint is never durable ahead of its panes); the bound on what is unacknowledged, in
 * messages and in bytes, is counted here, from the acknowledgements the thread reports.
 */
import { Worker } from "node:worker_threads";
import { MAX_IN_FLIGHT_UNITS } from "./pane-sink.js";
import type { FromPublisher, PublisherOptions, ToPublisher } from "./pane-publisher.js";

/** The main thread's end of the port (a Worker or a MessageChannel end). */
export interface PublisherPort {
  postMessage(m: ToPublisher, transfer?: ArrayBuffer[]): void;
  on(event: "message", listener: (m: FromPublisher) => void): void;
}

export class PaneThreadSink {
  private pending = 0;
  private units = 0;
  private nextFlush = 0;
  private readonly flushes = new Map<number, () => void>();
  private roomWaiters: Array<() => void> = [];
  private closed = false;
  /** Publishes acknowledged (duplicates included). */
  acked = 0;
  /** The buffer of each acknowledged body, back from the thread, free for the next body (BodyBuffers). */
  onReturned: (buffer: ArrayBuffer) => void = () => undefined;

  constructor(
    private readonly port: PublisherPort,
    private readonly maxInFlight: number,
    private readonly onError: (why: string, subject: string) => void = () => undefined,
    private readonly maxInFlightUnits = MAX_IN_FLIGHT_UNITS,
    private readonly onClose: () => void = () => undefined,
  ) {
    port.on("message", (m) => this.onMessage(m));
  }

  /** Starts the publisher thread (dist/runtime/pane-publisher.js) with its own connection to `natsUrl`. */
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
    return new PaneThreadSink(worker as unknown as PublisherPort, opts.maxInFlight, onError, MAX_IN_FLIGHT_UNITS, stop);
  }

  get inFlight(): number {
    return this.pending;
  }

  /** True when the engine should stop producing until `room()` resolves. */
  get saturated(): boolean {
    return this.pending >= this.maxInFlight || this.units >= this.maxInFlightUnits;
  }

  /**
   * Hands one message to the thread. The body's buffer goes with it (transferred, not copied: a
   * body at offset 0 of its buffer is taken to own it, as JsonLines' bodies do); a body further
   * into a buffer is copied.
   */
  publish(subject: string, body: Uint8Array, msgId: string): void {
    this.pending++;
    this.units += body.length;
    const own = body.byteOffset === 0 && body.buffer instanceof ArrayBuffer ? body : body.slice();
    this.port.postMessage({ t: "publish", subject, msgId, body: own }, [own.buffer as ArrayBuffer]);
  }

  /** Resolves once fewer than half of the bounds (messages and bytes) are pending. */
  room(): Promise<void> {
    if (this.roomy) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves when every publish issued before this call is acknowledged. */
  flush(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    const id = this.nextFlush++;
    return new Promise((resolve) => {
      this.flushes.set(id, resolve);
      this.port.postMessage({ t: "flush", id });
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
    return this.pending < this.maxInFlight / 2 && this.units < this.maxInFlightUnits / 2;
  }

  private onMessage(m: FromPublisher): void {
    if (m.t === "acked") {
      this.pending -= m.n;
      this.units -= m.bytes;
      this.acked += m.n;
      for (const b of m.buffers) this.onReturned(b);
      if (this.roomWaiters.length > 0 && this.roomy) {
        const waiters = this.roomWaiters;
        this.roomWaiters = [];
        for (const w of waiters) w();
      }
    } else if (m.t === "flushed") {
      this.flushes.get(m.id)?.();
      this.flushes.delete(m.id);
    } else if (m.t === "error") this.onError(m.why, m.subject);
  }
}
