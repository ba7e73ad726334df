import { SketchError, corrupt } from "./errors.js";
import { readFloat64 } from "./float-bytes.js";

/** Bounds-checked reader matching ByteWriter: never reads past the end, never returns garbage. */
export class ByteReader {
  private pos: number;
  /** End of the input: `buf` up to here (a codec reads `buf[start … end)`). */
  private end_: number;

  constructor(
    private buf: Uint8Array,
    private what: string,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end_ = end;
  }

  /** Reads `buf[start … end)` from now on (decodeReusing: one reader for many small codecs). */
  reset(buf: Uint8Array, what: string, start: number, end: number): this {
    this.buf = buf;
    this.what = what;
    this.pos = start;
    this.end_ = end;
    return this;
  }

  get remaining(): number {
    return this.end_ - this.pos;
  }

  byte(): number {
    this.need(1);
    return this.buf[this.pos++] as number;
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (i > 0 && b === 0) throw corrupt(`${this.what} (overlong varint)`);
        if (result > Number.MAX_SAFE_INTEGER) throw corrupt(`${this.what} (varint out of range)`);
        return result;
      }
      scale *= 0x80;
    }
    throw corrupt(`${this.what} (varint longer than 8 bytes)`);
  }

  zigzag(): number {
    const n = this.varint();
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  float64(): number {
    this.need(8);
    const x = readFloat64(this.buf, this.pos);
    this.pos += 8;
    return x;
  }

  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** Reads the 2-byte header every codec starts with: format version, then the sketch tag. */
  header(version: number, tag: number): void {
    const v = this.byte();
    const t = this.byte();
    if (t !== tag) throw corrupt(`${this.what} (wrong type tag ${t})`);
    if (v !== version) {
      throw new SketchError(
        "TM_SKETCH_CODEC_VERSION",
        `cannot decode ${this.what} format version ${v}; this build reads version ${version} — upgrade or re-encode`,
      );
    }
  }

  /** Every codec must consume its input exactly. */
  end(): void {
    if (this.pos !== this.end_) throw corrupt(`${this.what} (${this.remaining} trailing bytes)`);
  }

  private need(n: number): void {
    if (this.pos + n > this.end_) {
      throw new SketchError(
        "TM_SKETCH_CODEC_TRUNCATED",
        `cannot decode ${this.what}: input ends early; pass the whole encoding`,
      );
    }
  }
}

/**
 * Runs a codec's reading half over all of `bytes` (or `bytes[start … end)`: no view is made):
 * trailing bytes are corruption too.
 */
export function decodeWith<T>(
  bytes: Uint8Array,
  what: string,
  read: (r: ByteReader) => T,
  start = 0,
  end = bytes.length,
): T {
  const r = new ByteReader(bytes, what, start, end);
  const value = read(r);
  r.end();
  return value;
}

const NOTHING = new Uint8Array(0);
/** decodeReusing's reader, null while one of its calls runs (a nested call makes its own). */
let spare: ByteReader | null = new ByteReader(NOTHING, "");

/**
 * decodeWith through one reader kept for the next call: restoring a checkpoint decodes one
 * aggregate per (slice, key), and no reader object is made for each. The reader lets go of
 * `bytes` when done.
 */
export function decodeReusing<T>(
  bytes: Uint8Array,
  what: string,
  read: (r: ByteReader) => T,
  start: number,
  end: number,
): T {
  const r = spare;
  if (r === null) return decodeWith(bytes, what, read, start, end);
  spare = null;
  try {
    const value = read(r.reset(bytes, what, start, end));
    r.end();
    return value;
  } finally {
    spare = r.reset(NOTHING, "", 0, 0);
  }
}
