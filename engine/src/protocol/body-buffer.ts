/**
 * BodyBuffer: the growing, reused byte buffer under both pane-body writers (json-lines.ts, the
 * NDJSON body; pane-records.ts, the binary body). It owns where the bytes go and how a finished
 * body is handed over; each writer owns what the bytes are (docs/decisions/0021-runtime-lean.md:
 * buffers are taken from and given back to a pool; docs/decisions/0047-binary-panes.md).
 *
 * Pure: no node:* imports, no clock, no env.
 */

/** Where a writer takes its buffers from and gives back the ones it outgrew (by default: new ones, dropped). */
export interface LineBuffers {
  /** A buffer of at least `bytes` (its contents are not read). */
  take(bytes: number): Uint8Array;
  give(buffer: ArrayBuffer): void;
}

export const EMPTY_BODY = new Uint8Array(0);
const FRESH: LineBuffers = { take: (bytes) => new Uint8Array(bytes), give: () => undefined };

export abstract class BodyBuffer {
  /** EMPTY_BODY until the first byte of a body is written (then a buffer from `buffers`). */
  protected buf: Uint8Array = EMPTY_BODY;
  protected pos = 0;
  /** Records (lines) written so far. */
  lines = 0;

  constructor(
    /** Bytes of the first buffer taken for a body. */
    protected initial = 4096,
    protected readonly buffers: LineBuffers = FRESH,
  ) {}

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /** A copy of the body so far (the buffer stays with the writer). */
  body(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /**
   * Hands over the body so far and starts the next one. A body filling at least a quarter of the
   * writer's buffer is handed over without copying it (a view at offset 0 of that buffer, which is
   * the caller's from now on; the writer takes the next from `buffers`); a smaller one is copied
   * and the writer keeps its buffer, so a short body does not hold a large buffer while it is in
   * flight.
   */
  take(): Uint8Array {
    if (this.pos * 4 < this.buf.length) {
      const copy = this.buf.slice(0, this.pos);
      this.reset();
      return copy;
    }
    const body = this.buf.subarray(0, this.pos);
    this.buf = EMPTY_BODY;
    this.reset();
    return body;
  }

  /** Gives the buffer back to `buffers`; written to again, the writer takes a new one. */
  release(): void {
    if (this.buf !== EMPTY_BODY) this.buffers.give(this.buf.buffer as ArrayBuffer);
    this.buf = EMPTY_BODY;
    this.reset();
  }

  /** Empties the writer for the next body; the buffer is kept. */
  abstract reset(): void;

  /** Makes room for `n` more bytes: a buffer at least twice as large from `buffers`, the old one given back. */
  protected room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = this.buffers.take(Math.max(this.buf.length * 2, this.initial, this.pos + n));
    grown.set(this.buf.subarray(0, this.pos));
    if (this.buf !== EMPTY_BODY) this.buffers.give(this.buf.buffer as ArrayBuffer);
    this.buf = grown;
    this.grew();
  }

  /** Called after the buffer changed (a writer keeping a view of it renews the view). */
  protected grew(): void {}
}
