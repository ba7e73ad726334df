import { writeFloat64 } from "./float-bytes.js";

/** One scratch buffer shared by writers that do not overlap (encoding is synchronous). */
let scratch: Uint8Array | null = new Uint8Array(4096);

/**
 * Growable byte buffer with LEB128 varints: the writing half of every codec. It borrows the
 * shared scratch when free (no allocation but the result), else owns a buffer; `finish` returns
 * a copy of what was written, `release` gives the scratch back (encodeWith does both).
 */
export class ByteWriter {
  private buf: Uint8Array;
  private pos = 0;
  private borrowed: boolean;

  /** `own`: a buffer of its own (the writer lendWriter reuses), else the shared scratch when free. */
  constructor(own?: Uint8Array) {
    this.borrowed = own === undefined && scratch !== null;
    this.buf = own ?? scratch ?? new Uint8Array(256);
    if (this.borrowed) scratch = null;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** Unsigned integer 0 ≤ n ≤ 2^53 − 1, 7 bits per byte. */
  varint(n: number): void {
    this.ensure(8);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.pos++] = n;
  }

  /** Signed integer in the safe range, zigzag coded so small magnitudes stay short. */
  zigzag(n: number): void {
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  float64(x: number): void {
    this.ensure(8);
    writeFloat64(this.buf, this.pos, x);
    this.pos += 8;
  }

  /** Reserves n bytes for the caller to fill in `target` from the returned offset. */
  block(n: number): number {
    this.ensure(n);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  /** The buffer `block` offsets point into (valid until the next write). */
  get target(): Uint8Array {
    return this.buf;
  }

  /** Bytes written so far (they sit at `target[0 … written)`). */
  get written(): number {
    return this.pos;
  }

  /** A copy of what was written. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /** True when the writer holds the shared scratch (give it back with release). */
  get borrowsScratch(): boolean {
    return this.borrowed;
  }

  /** Empties the writer, keeping its buffer. */
  rewind(): void {
    this.pos = 0;
  }

  /** Gives the shared scratch back (the writer must not be used afterwards). */
  release(): void {
    if (this.borrowed) scratch = this.buf;
    this.borrowed = false;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
}

/** The writer lendWriter hands out, emptied; null while lent (a nested call gets a fresh one). */
let lendable: ByteWriter | null = new ByteWriter(new Uint8Array(4096));

/**
 * An empty writer with a buffer of its own, the same one each time it is given back: encoding
 * every aggregate of a checkpoint allocates no writer per aggregate (RequestAggregate.encodeInto:
 * the bytes are the writer's `target[0 … written)`, valid until it is given back with returnWriter).
 */
export function lendWriter(): ByteWriter {
  const w = lendable ?? new ByteWriter();
  lendable = null;
  return w;
}

export function returnWriter(w: ByteWriter): void {
  if (w.borrowsScratch) return w.release();
  w.rewind();
  lendable = w;
}

/** Runs a codec's writing half and returns the bytes. */
export function encodeWith(write: (w: ByteWriter) => void): Uint8Array {
  const w = new ByteWriter();
  try {
    write(w);
    return w.finish();
  } finally {
    w.release();
  }
}
