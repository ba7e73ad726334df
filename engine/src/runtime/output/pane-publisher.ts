/**
 * The pane publisher: the thread that owns the engine's TM_PANES / TM_LATE publishing
 * (docs/decisions/0017-engine-throughput.md). It holds its own NATS connection and a PaneSink;
 * the engine's main thread hands it each batch (subject, message id, body bytes, transferred, not
 * copied) over a message port, in order, and hears back the acknowledgements and flushes
 * (PaneThreadSink, pane-thread-sink.ts). `servePanePort` is the protocol, runnable on any port
 * (the unit tests drive it over a MessageChannel); run as a worker thread this file connects
 * and serves its parent port.
 */
import { isMainThread, parentPort, workerData, type MessagePort } from "node:worker_threads";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../nats/index.js";
import { PaneSink, type AckPublisher } from "./pane-sink.js";
import type { SweepReport } from "./resend-sweep.js";

/** Main thread → publisher. */
export type ToPublisher =
  { t: "publish"; subject: string; msgId: string; body: Uint8Array } | { t: "flush"; id: number } | { t: "close" };

/** Publisher → main thread. */
export type FromPublisher =
  | { t: "acked"; n: number; bytes: number; buffers: ArrayBuffer[] }
  | { t: "flushed"; id: number }
  | { t: "sweep"; report: SweepReport & { inFlight: number } }
  | { t: "error"; why: string; subject: string }
  | { t: "closed" };

export interface PublisherOptions {
  natsUrl: string;
  maxInFlight: number;
  /** Bytes of unacknowledged bodies at most (the main thread's window, pane-thread-sink.ts). */
  maxInFlightBytes: number;
}

/** Minimal port: a worker's parentPort or one end of a MessageChannel. */
export interface PanePort {
  postMessage(m: FromPublisher, transfer?: ArrayBuffer[]): void;
  on(event: "message", listener: (m: ToPublisher) => void): void;
}

/**
 * Publishes what the port sends through a PaneSink on `nc`; acknowledgements are reported once
 * per event-loop turn (summed), flushes when every publish received before them is acknowledged.
 * Resolves when a `close` has been handled.
 */
export function servePanePort(port: PanePort, nc: AckPublisher, _opts: PublisherOptions): Promise<void> {
  const sink = new PaneSink(nc, {
    // The main thread bounds what is in flight (pane-thread-sink.ts); here the sink never holds back.
    limits: { messages: Number.MAX_SAFE_INTEGER, bytes: Number.MAX_SAFE_INTEGER },
    onError: (why, subject) => port.postMessage({ t: "error", why, subject }),
    onSweep: (report) => port.postMessage({ t: "sweep", report }),
  });
  let n = 0;
  let bytes = 0;
  let buffers: ArrayBuffer[] = [];
  // Acknowledged bodies' buffers go back with the count, for the main thread's next bodies.
  const report = (): void => {
    if (n === 0) return;
    port.postMessage({ t: "acked", n, bytes, buffers }, buffers);
    n = 0;
    bytes = 0;
    buffers = [];
  };
  sink.onAcked = (_body, b) => {
    if (n === 0) setImmediate(report);
    n++;
    bytes += b;
  };
  sink.onReturned = (buffer) => {
    if (buffer.byteLength > 0 && !buffers.includes(buffer)) buffers.push(buffer);
  };
  return new Promise((resolve) => {
    port.on("message", (m) => {
      if (m.t === "publish") sink.publish(m.subject, m.body, m.msgId);
      else if (m.t === "flush")
        void sink.flush().then(() => {
          report(); // the acks before the flush are counted first
          port.postMessage({ t: "flushed", id: m.id });
        });
      else {
        sink.close();
        report();
        port.postMessage({ t: "closed" });
        resolve();
      }
    });
  });
}

async function runThread(port: MessagePort, opts: PublisherOptions): Promise<void> {
  const nc: NatsConnection = await connectNats(opts.natsUrl, { maxReconnectAttempts: -1 });
  await servePanePort(port as unknown as PanePort, nc, opts);
  await Promise.race([nc.drain().catch(() => undefined), new Promise((r) => setTimeout(r, 3_000).unref())]);
  if (!nc.isClosed()) await nc.close().catch(() => undefined);
  port.close();
}

if (!isMainThread && parentPort && (workerData as { panePublisher?: PublisherOptions } | null)?.panePublisher) {
  const port = parentPort;
  runThread(port, (workerData as { panePublisher: PublisherOptions }).panePublisher).catch((err: Error) => {
    port.postMessage({ t: "error", why: `pane publisher failed: ${err.message}`, subject: "" });
    process.exit(1);
  });
}
