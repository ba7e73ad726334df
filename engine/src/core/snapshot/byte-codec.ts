/** Minimal binary codec for snapshots: varints, float64, strings, byte blocks, CRC-32. */
import { CoreError } from "../errors.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Past this size the writer adds chunks instead of doubling: a big snapshot is never copied to grow. */
const CHUNK_BYTES = 1 << 20;

export class ByteWriter {
  private buf: Uint8Array = new Uint8Array(1024);
  private view32: DataView = new DataView(this.buf.buffer);
  /** Full chunks before `buf`. */
  private full: Uint8Array[] = [];
  /** Bytes written into `buf`. */
  private length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    if (this.buf.length >= CHUNK_BYTES) {
      this.full.push(this.buf.subarray(0, this.length));
      this.use(new Uint8Array(Math.max(CHUNK_BYTES, n)), 0);
      return;
    }
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.use(next, this.length);
  }

  private use(buf: Uint8Array, length: number): void {
    this.buf = buf;
    this.view32 = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.length = length;
  }

  /** Unsigned integer up to 2^53. */
  uint(v: number): void {
    this.reserve(8);
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }

  f64(v: number): void {
    this.reserve(8);
    this.view32.setFloat64(this.length, v, true);
    this.length += 8;
  }

  bool(v: boolean): void {
    this.uint(v ? 1 : 0);
  }

  /** Like bytes(src.subarray(0, length)) without making the view: a short copy loop. */
  bytesOf(src: Uint8Array, length: number): void {
    this.uint(length);
    this.reserve(length);
    const buf = this.buf;
    const at = this.length;
    for (let i = 0; i < length; i++) buf[at + i] = src[i] as number;
    this.length = at + length;
  }

  bytes(b: Uint8Array): void {
    this.uint(b.length);
    this.raw(b);
  }

  /**
   * The pieces as they are, no length prefix, taken as chunks of their own instead of copied: the
   * caller gives them up (nothing may write into them after). What follows is written after them.
   */
  adopt(pieces: readonly Uint8Array[]): void {
    if (this.length > 0) this.full.push(this.buf.subarray(0, this.length));
    for (const p of pieces) if (p.length > 0) this.full.push(p);
    // Writing goes on in what is left of the current buffer, or a fresh one when little is left.
    const rest = this.buf.subarray(this.length);
    this.use(rest.length >= 1024 ? rest : new Uint8Array(1024), 0);
  }

  /** The bytes as they are, no length prefix. */
  raw(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  /** UTF-8 with a length prefix; ASCII is written directly (no allocation). */
  string(s: string): void {
    const n = s.length;
    this.reserve(n + 8);
    const at = this.length;
    this.uint(n);
    let pos = this.length;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.length = at;
        this.bytes(encoder.encode(s));
        return;
      }
      this.buf[pos++] = c;
    }
    this.length = pos;
  }

  /** Little-endian unsigned 32-bit (the trailing checksum). */
  u32(v: number): void {
    this.reserve(4);
    this.view32.setUint32(this.length, v, true);
    this.length += 4;
  }

  /** The bytes written so far, in pieces (views: valid until the next write). */
  chunks(): Uint8Array[] {
    return [...this.full, this.buf.subarray(0, this.length)];
  }

  /** The bytes written so far, contiguous (a view: valid until the next write). */
  view(): Uint8Array {
    if (this.full.length > 0) {
      const all = joinChunks(this.chunks());
      this.full = [];
      this.use(all, all.length);
    }
    return this.buf.subarray(0, this.length);
  }

  finish(): Uint8Array {
    return this.view().slice();
  }
}

function joinChunks(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Slots of a reader's cache of short ASCII strings (a power of two). */
const NAME_SLOTS = 4096;
/** Strings up to this many bytes go through the cache. */
const NAME_MAX = 64;

export class ByteReader {
  private readonly view: DataView;
  /**
   * Short ASCII strings read so far, by a hash of their bytes: a snapshot names each service and
   * route once per slice and window, and a hit returns the string already made (no allocation).
   */
  private readonly names: (string | undefined)[] = new Array<string | undefined>(NAME_SLOTS);
  pos = 0;
  /**
   * The saved slot → today's slot (-1: dropped) of a snapshot written with another kind-slot
   * layout (panes/kind-slot.ts, V6_SLOTS); null: today's layout.
   */
  slotMap: readonly number[] | null = null;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length)
      throw new CoreError("TM_SNAPSHOT_CORRUPT", "snapshot is truncated: restore from an older checkpoint");
  }

  uint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      this.need(1);
      const b = this.buf[this.pos++] ?? 0;
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
      if (scale > 2 ** 56) throw new CoreError("TM_SNAPSHOT_CORRUPT", "snapshot holds a malformed integer");
    }
  }

  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  bool(): boolean {
    return this.uint() === 1;
  }

  bytes(): Uint8Array {
    const n = this.uint();
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** Reads what bytes() reads without a view: calls `read(buf, start, end)` over the reader's own buffer. */
  bytesWith<T>(read: (buf: Uint8Array, start: number, end: number) => T): T {
    const n = this.uint();
    this.need(n);
    const start = this.pos;
    this.pos += n;
    return read(this.buf, start, start + n);
  }

  string(): string {
    const n = this.uint();
    this.need(n);
    const at = this.pos;
    if (n <= NAME_MAX) {
      const name = this.asciiName(at, n);
      if (name !== undefined) {
        this.pos = at + n;
        return name;
      }
    }
    this.pos = at + n;
    try {
      return decoder.decode(this.buf.subarray(at, at + n));
    } catch (e) {
      if (e instanceof CoreError) throw e;
      throw new CoreError("TM_SNAPSHOT_CORRUPT", "snapshot holds invalid UTF-8");
    }
  }

  get done(): boolean {
    return this.pos === this.buf.length;
  }

  /** buf[at, at + n) as a string when it is ASCII (from the cache when seen before), else undefined. */
  private asciiName(at: number, n: number): string | undefined {
    const buf = this.buf;
    let h = 0x811c9dc5 ^ n;
    for (let i = at; i < at + n; i++) {
      const b = buf[i] as number;
      if (b >= 0x80) return undefined;
      h = Math.imul(h ^ b, 0x01000193);
    }
    const slot = (h >>> 0) & (NAME_SLOTS - 1);
    const hit = this.names[slot];
    if (hit !== undefined && hit.length === n) {
      let same = true;
      for (let i = 0; i < n && same; i++) same = hit.charCodeAt(i) === buf[at + i];
      if (same) return hit;
    }
    const s = String.fromCharCode.apply(null, buf.subarray(at, at + n) as unknown as number[]);
    this.names[slot] = s;
    return s;
  }
}

/** Slicing-by-4 tables: T[0] is the byte table, T[k][n] the CRC of n followed by k zero bytes. */
const CRC_TABLES = (() => {
  const t = Array.from({ length: 4 }, () => new Uint32Array(256));
  const t0 = t[0] as Uint32Array;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t0[n] = c >>> 0;
  }
  for (let k = 1; k < 4; k++) {
    const prev = t[k - 1] as Uint32Array;
    const cur = t[k] as Uint32Array;
    for (let n = 0; n < 256; n++) cur[n] = (t0[(prev[n] as number) & 0xff] as number) ^ ((prev[n] as number) >>> 8);
  }
  return t as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
})();

/** CRC-32 (IEEE) of a byte range, four bytes per step (slicing-by-4, the same value as byte by byte). */
export function crc32(bytes: Uint8Array): number {
  return crc32Final(crc32Update(CRC32_START, bytes, 0, bytes.length));
}

/** The running value before any byte (crc32Update's first `c`). */
export const CRC32_START = 0xffffffff;

/** The CRC-32 of what crc32Update has seen, from its running value. */
export function crc32Final(c: number): number {
  return (c ^ 0xffffffff) >>> 0;
}

/** A CRC-32 (IEEE) of `bytes` continuing from the CRC-32 `previous` of what came before (node:zlib's crc32). */
export type Crc32Continue = (bytes: Uint8Array, previous: number) => number;

let hostCrc32: Crc32Continue | null = null;

/**
 * Hands the core a native CRC-32 (the runtime passes node:zlib's, docs/decisions/0052-native-crc32.md):
 * the core stays free of node:* imports, and every checksum is the same value (byte-codec.test.ts
 * checks the tables below against node:zlib). `null` goes back to the tables.
 */
export function useCrc32(impl: Crc32Continue | null): void {
  hostCrc32 = impl;
}

/**
 * Feeds bytes[start, end) to a running CRC-32 value `c` (CRC32_START at first): a checksum taken
 * in pieces (a snapshot encoded across event-loop turns) equals crc32 of the whole.
 */
export function crc32Update(c: number, bytes: Uint8Array, start: number, end: number): number {
  if (hostCrc32 !== null) return (hostCrc32(bytes.subarray(start, end), (c ^ 0xffffffff) >>> 0) ^ 0xffffffff) >>> 0;
  const [t0, t1, t2, t3] = CRC_TABLES;
  const whole = start + (end - start - ((end - start) % 4));
  let i = start;
  for (; i < whole; i += 4) {
    c ^=
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    c =
      (t3[c & 0xff] as number) ^
      (t2[(c >>> 8) & 0xff] as number) ^
      (t1[(c >>> 16) & 0xff] as number) ^
      (t0[c >>> 24] as number);
  }
  for (; i < end; i++) c = (t0[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return c;
}
