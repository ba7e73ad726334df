/**
 * The gzip thread: compresses pane and late bodies for a CompressingSink off the operator's thread
 * (docs/decisions/0047-binary-panes.md, "Compression off the main thread"). The operator's thread
 * transfers each body's buffer here and gets back, in the order sent, the compressed body in a
 * buffer of its own size and the body's buffer (for reuse). `serveGzipPort` is the protocol,
 * runnable on any port (the unit tests drive it over a MessageChannel); run as a worker thread,
 * this file serves its parent port.
 */
import { isMainThread, parentPort, type MessagePort } from "node:worker_threads";
import { gzipSync } from "node:zlib";

/** Operator thread → gzip thread. */
export interface ToGzip {
  id: number;
  body: Uint8Array;
}

/** Gzip thread → operator thread. */
export interface FromGzip {
  id: number;
  packed: Uint8Array;
  /** The body's buffer, back for reuse. */
  buffer: ArrayBuffer;
}

export function serveGzipPort(port: MessagePort): void {
  port.on("message", (m: ToGzip) => {
    const gz = gzipSync(m.body, { level: 1 });
    // zlib returns the body inside a larger chunk: copied out, the reply transfers only its bytes.
    const packed = gz.byteLength < gz.buffer.byteLength ? new Uint8Array(gz) : gz;
    const buffer = m.body.buffer as ArrayBuffer;
    const reply: FromGzip = { id: m.id, packed, buffer };
    port.postMessage(reply, [packed.buffer as ArrayBuffer, buffer]);
  });
}

if (!isMainThread && parentPort) serveGzipPort(parentPort);
