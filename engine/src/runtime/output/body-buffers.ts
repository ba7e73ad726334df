/**
 * BodyBuffers: the buffers pane and late batch bodies are written into, kept for reuse once the
 * stream has acknowledged their message (docs/decisions/0017-engine-throughput.md). A body is
 * written into a buffer (JsonLines), handed to the sink as it is (no copy) and, acknowledged,
 * comes back here; a fresh buffer for each body costs more than the JSON in it (the kernel maps
 * and zeroes its pages on first touch). Bounded: buffers past MAX_KEPT_BYTES are left to the GC.
 */
import type { LineBuffers } from "../../protocol.js";

/** The smallest buffer handed out: a typical body (a TM_EVENTS message's panes on one subject) fits. */
const MIN_BYTES = 64 * 1024;
/** Bytes of idle buffers kept at most. */
const MAX_KEPT_BYTES = 32 * 1024 * 1024;

export class BodyBuffers implements LineBuffers {
  private readonly idle: ArrayBuffer[] = [];
  private kept = 0;

  take(bytes: number): Uint8Array {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const b = this.idle[i] as ArrayBuffer;
      if (b.byteLength < bytes) continue;
      this.idle[i] = this.idle[this.idle.length - 1] as ArrayBuffer;
      this.idle.pop();
      this.kept -= b.byteLength;
      return new Uint8Array(b);
    }
    return new Uint8Array(Math.max(MIN_BYTES, bytes));
  }

  give(buffer: ArrayBuffer): void {
    // A buffer under MIN_BYTES is a short body's own copy (JsonLines.take): not worth keeping.
    if (buffer.byteLength < MIN_BYTES || this.kept + buffer.byteLength > MAX_KEPT_BYTES) return;
    this.idle.push(buffer);
    this.kept += buffer.byteLength;
  }

  /** Idle buffers kept (for tests and the benchmark). */
  get size(): number {
    return this.idle.length;
  }
}
