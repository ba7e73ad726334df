/**
 * CompressingSink: gzip-compresses pane and late bodies off the operator's thread, in a gzip thread
 * of its own (gzip-thread.ts; each body's buffer transferred, not copied), and hands them to the
 * sink it wraps in the order they were published (docs/decisions/0047-binary-panes.md,
 * "Compression off the main thread"). Node's own asynchronous `zlib.gzip` was measured and not
 * taken: its stream machinery kept the main thread busier than compressing there. What must hold holds:
 *
 * - **Order and ids**: a body goes to the inner sink only after every body published before it,
 *   with its own message id; ids and bodies are made on the operator's thread as before.
 * - **Flush before checkpoint**: `flush()` resolves once every body published before it has been
 *   compressed, handed over and acknowledged (the inner sink's flush).
 * - **Bounded**: bodies being compressed count in messages and bytes (`limits`); at either bound
 *   the sink is `saturated` and `room()` waits for it, as the inner sink's window does.
 *
 * A body's buffer goes back to `give` once it is compressed (the compressed copy is what stays in
 * flight), so the writers reuse it (BodyBuffers). If the gzip thread fails, `room()` and `flush()`
 * reject with its error: its bodies stay unacknowledged, so no checkpoint passes them.
 */
import { Worker } from "node:worker_threads";
import type { FromGzip, ToGzip } from "./gzip-thread.js";
import type { PublishStats } from "./publish-window.js";
import type { OperatorSink } from "./operator-sink.js";

/** The operator's end of the gzip thread's port (a Worker, or a MessageChannel end in tests). */
export interface GzipPort {
  postMessage(m: ToGzip, transfer: ArrayBuffer[]): void;
  on(event: "message", f: (m: FromGzip) => void): unknown;
  /** Stops the thread (a Worker's terminate). */
  stop(): void;
}

/** A gzip thread as a worker (unref'd: it does not keep the process alive). */
export function gzipWorker(onError: (err: Error) => void): GzipPort {
  const w = new Worker(new URL("./gzip-thread.js", import.meta.url));
  w.on("error", onError);
  w.unref();
  return {
    postMessage: (m, transfer) => w.postMessage(m, transfer),
    on: (event, f) => w.on(event, f),
    stop: () => void w.terminate(),
  };
}

interface Waiting {
  id: number;
  /** Bytes of the body, counted against the bound while it is compressed. */
  size: number;
  subject: string;
  msgId: string;
  /** Set once compressed. */
  packed: Uint8Array | undefined;
}

/** Bodies being compressed at most: in messages (a few per thread-pool thread) and bytes. */
export const COMPRESSING_LIMITS = { messages: 64, bytes: 16 * 1024 * 1024 };

export class CompressingSink implements OperatorSink {
  private readonly line: Waiting[] = [];
  private bytes = 0;
  private next = 0;
  private closed = false;
  private failed: Error | undefined;
  private readonly port: GzipPort;
  /** Called when the line moves: room() and flush() waiters check again. */
  private moved: Array<() => void> = [];

  constructor(
    private readonly inner: OperatorSink,
    private readonly give: (buffer: ArrayBuffer) => void,
    private readonly limits = COMPRESSING_LIMITS,
    port?: GzipPort,
  ) {
    // The compressed copies are the inner sink's to drop; only the uncompressed buffers are reused.
    inner.onReturned = () => undefined;
    this.port = port ?? gzipWorker((err) => this.fail(err));
    this.port.on("message", (m) => this.compressed(m));
  }

  get onReturned(): (buffer: ArrayBuffer) => void {
    return this.give;
  }

  set onReturned(_f: (buffer: ArrayBuffer) => void) {
    // Buffers come back to `give` as soon as they are compressed, not when acknowledged.
  }

  publish(subject: string, body: Uint8Array, msgId: string): void {
    const id = this.next++;
    this.line.push({ id, size: body.length, subject, msgId, packed: undefined });
    this.bytes += body.length;
    this.port.postMessage({ id, body }, [body.buffer as ArrayBuffer]);
  }

  /** The gzip thread answers in the order it was asked: the first body of the line not yet compressed. */
  private compressed(m: FromGzip): void {
    const w = this.line.find((x) => x.packed === undefined);
    if (w?.id !== m.id) return this.fail(new Error(`gzip thread answered body ${m.id}, not ${w?.id}`));
    w.packed = m.packed;
    this.bytes -= w.size;
    this.give(m.buffer);
    this.release();
  }

  get saturated(): boolean {
    return this.full() || this.inner.saturated;
  }

  get inFlight(): number {
    return this.inner.inFlight + this.line.length;
  }

  get acked(): number {
    return this.inner.acked;
  }

  stats(): PublishStats {
    return this.inner.stats();
  }

  async room(): Promise<void> {
    while (this.full() && !this.closed) await this.move();
    if (this.inner.saturated) await this.inner.room();
  }

  async flush(): Promise<void> {
    while (this.line.length > 0 && !this.closed) await this.move();
    await this.inner.flush();
  }

  close(): void {
    this.closed = true;
    this.port.stop();
    this.inner.close();
  }

  private fail(err: Error): void {
    this.failed ??= err;
    this.wake();
  }

  private wake(): void {
    const moved = this.moved;
    this.moved = [];
    for (const m of moved) m();
  }

  private full(): boolean {
    return this.line.length >= this.limits.messages || this.bytes >= this.limits.bytes;
  }

  /** Resolves when the line moves; rejects once the gzip thread has failed. */
  private move(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => this.moved.push(() => (this.failed ? reject(this.failed) : resolve())));
  }

  /** Hands the compressed bodies at the head of the line to the inner sink, in order. */
  private release(): void {
    // Closed: what is still being compressed is unacknowledged, and a restart replays it.
    while (!this.closed && this.line[0]?.packed !== undefined) {
      const w = this.line.shift() as Waiting;
      this.inner.publish(w.subject, w.packed as Uint8Array, w.msgId);
    }
    this.wake();
  }
}
