/**
 * PublishWindow: what a publisher has sent to one stream and not yet seen acknowledged, counted in
 * messages and bytes against its bound (docs/decisions/0035-backpressure.md, "The window"). The
 * publisher sends a message only when the window admits it, so what is in flight never exceeds
 * the bound; one message larger than the byte bound goes alone, into an empty window, so no body
 * can wait for ever.
 *
 * Bytes are those a body holds in memory: a byte body's whole buffer when it starts at offset 0
 * (JsonLines hands its buffer over, at most four times the body, docs/decisions/0021-runtime-lean.md),
 * UTF-8 bytes for a text body, never UTF-16 units.
 *
 * Pure: counters only.
 */

export interface WindowLimits {
  readonly messages: number;
  readonly bytes: number;
}

export interface WindowCount {
  messages: number;
  bytes: number;
}

/** What a publisher reports of its window (tidemark_engine_publish_*, tm.status `backpressure`). */
export interface PublishStats {
  inFlight: WindowCount;
  waiting: WindowCount;
  limits: WindowLimits;
  resends: number;
}

/** A publisher's stats: its window, what waits behind it, and how many it sent again. */
export function publishStats(window: PublishWindow, waiting: { count(): WindowCount }, resends: number): PublishStats {
  return { inFlight: window.count(), waiting: waiting.count(), limits: window.limits, resends };
}

const utf8 = new TextEncoder();

/** The bytes a body holds while it is unacknowledged. */
export function bodyBytes(body: string | Uint8Array): number {
  if (typeof body === "string") return utf8.encode(body).byteLength;
  return body.byteOffset === 0 ? Math.max(body.byteLength, body.buffer.byteLength) : body.byteLength;
}

export class PublishWindow {
  messages = 0;
  bytes = 0;
  /** The largest counts seen, for tests and the benchmark. */
  peakMessages = 0;
  peakBytes = 0;

  constructor(readonly limits: WindowLimits) {}

  /** True when a message of `bytes` may be sent now without passing the bound. */
  admits(bytes: number): boolean {
    if (this.messages >= this.limits.messages) return false;
    return this.messages === 0 || this.bytes + bytes <= this.limits.bytes;
  }

  add(bytes: number): void {
    this.messages++;
    this.bytes += bytes;
    if (this.messages > this.peakMessages) this.peakMessages = this.messages;
    if (this.bytes > this.peakBytes) this.peakBytes = this.bytes;
  }

  remove(bytes: number): void {
    this.messages--;
    this.bytes -= bytes;
  }

  /** At its bound in messages or bytes. */
  get full(): boolean {
    return this.messages >= this.limits.messages || this.bytes >= this.limits.bytes;
  }

  /** Under half of both bounds: a held producer may go on (hysteresis, so it does not flap). */
  get roomy(): boolean {
    return this.messages < this.limits.messages / 2 && this.bytes < this.limits.bytes / 2;
  }

  count(): WindowCount {
    return { messages: this.messages, bytes: this.bytes };
  }
}
