/**
 * Reading a binary pane body ("TMPN", pane-records.ts; docs/protocol.md "Pane bodies"): its
 * records as plain objects, whose `JSON.stringify` is byte for byte the JSON they were written
 * from. A body of a version newer than PANE_BODY_VERSION is refused with an error naming its
 * version (the reader is older than the writer: upgrade it); a body that does not decode is
 * refused with the byte offset where it stops making sense. Nesting is bounded (MAX_DEPTH).
 *
 * Pure: no node:* imports, no clock, no env.
 */

import { PANE_BODY_HEADER, PANE_BODY_MAGIC, PANE_BODY_VERSION, TAG } from "./pane-encoding.js";

/** Objects and arrays nest at most this deep in a record (a pane nests 4 deep). */
export const MAX_DEPTH = 32;

/**
 * A pane body that cannot be read. Codes: TM_PANE_BODY_VERSION (written by a newer tidemark:
 * upgrade this reader), TM_PANE_BODY_MALFORMED (`field` names what is wrong).
 */
export class PaneBodyError extends Error {
  constructor(
    readonly code: "TM_PANE_BODY_VERSION" | "TM_PANE_BODY_MALFORMED",
    readonly field: string,
    why: string,
  ) {
    super(`pane body ${field} ${why}`);
    this.name = "PaneBodyError";
  }
}

/** True when a body starts with the binary pane encoding's magic. */
export function isBinaryPaneBody(body: Uint8Array): boolean {
  return body.length >= 4 && PANE_BODY_MAGIC.every((m, i) => body[i] === m);
}

/** The records of a binary pane body, in order. Throws PaneBodyError. */
export function readPaneRecords(body: Uint8Array): unknown[] {
  if (!isBinaryPaneBody(body)) throw new PaneBodyError("TM_PANE_BODY_MALFORMED", "magic", "is not TMPN");
  if (body.length < PANE_BODY_HEADER) throw new PaneBodyError("TM_PANE_BODY_MALFORMED", "version", "is missing");
  const version = body[4] as number;
  if (version > PANE_BODY_VERSION)
    throw new PaneBodyError(
      "TM_PANE_BODY_VERSION",
      "version",
      `${version} is newer than this reader, which reads up to ${PANE_BODY_VERSION}: upgrade it`,
    );
  if (version < 1) throw new PaneBodyError("TM_PANE_BODY_MALFORMED", "version", `${version} was never written`);
  return new Reader(body).records();
}

class Reader {
  private pos = PANE_BODY_HEADER;
  private readonly view: DataView;
  private readonly strings: string[] = [];
  private readonly shapes: string[][] = [];

  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  records(): unknown[] {
    const out: unknown[] = [];
    while (this.pos < this.buf.length) out.push(this.value(0));
    return out;
  }

  private fail(why: string): never {
    throw new PaneBodyError("TM_PANE_BODY_MALFORMED", `byte ${this.pos}`, why);
  }

  private byte(): number {
    if (this.pos >= this.buf.length) this.fail("is past the end: the body is cut short");
    return this.buf[this.pos++] as number;
  }

  private varint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      n += (b & 127) * scale;
      if (b < 128) return n;
      scale *= 128;
    }
    return this.fail("ends a varint longer than 8 bytes");
  }

  private value(depth: number): unknown {
    const t = this.byte();
    if (t >= TAG.SMALL) return t & 127;
    if (t >= TAG.STRING_SHORT) return this.again(t & 63);
    if (t >= TAG.SHAPE_SHORT) return this.object(this.shape(t & 31), depth + 1);
    switch (t) {
      case TAG.NULL:
        return null;
      case TAG.FALSE:
        return false;
      case TAG.TRUE:
        return true;
      case TAG.UINT:
        return this.varint();
      case TAG.NINT:
        return -this.varint();
      case TAG.F64:
        return this.f64();
      case TAG.ASCII:
      case TAG.UTF16:
      case TAG.STRING_AGAIN:
        return this.string(t);
      case TAG.ARRAY:
        return this.array(depth + 1);
      case TAG.SHAPE:
        return this.object(this.newShape(), depth + 1);
      case TAG.SHAPE_AGAIN:
        return this.object(this.shape(this.varint()), depth + 1);
      default:
        return this.fail(`holds tag 0x${t.toString(16)}, which version ${PANE_BODY_VERSION} does not have`);
    }
  }

  private f64(): number {
    if (this.pos + 8 > this.buf.length) this.fail("is past the end: the body is cut short");
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  private string(t: number): string {
    if (t >= TAG.STRING_SHORT && t < TAG.SMALL) return this.again(t & 63);
    if (t === TAG.STRING_AGAIN) return this.again(this.varint());
    if (t !== TAG.ASCII && t !== TAG.UTF16) this.fail(`holds tag 0x${t.toString(16)} where a key (a string) belongs`);
    const n = this.varint();
    const bytes = t === TAG.ASCII ? n : n * 2;
    if (this.pos + bytes > this.buf.length) this.fail("is past the end: the body is cut short");
    const s = t === TAG.ASCII ? this.ascii(n) : this.utf16(n);
    this.strings.push(s);
    return s;
  }

  private again(i: number): string {
    if (i >= this.strings.length) this.fail(`names string ${i} of ${this.strings.length}`);
    return this.strings[i] as string;
  }

  private shape(i: number): string[] {
    if (i >= this.shapes.length) this.fail(`names shape ${i} of ${this.shapes.length}`);
    return this.shapes[i] as string[];
  }

  private newShape(): string[] {
    const n = this.varint();
    if (n > this.buf.length - this.pos) this.fail(`announces ${n} keys, more than the body's bytes left`);
    const keys = new Array<string>(n);
    for (let i = 0; i < n; i++) keys[i] = this.string(this.byte());
    this.shapes.push(keys);
    return keys;
  }

  private ascii(n: number): string {
    const buf = this.buf;
    const end = this.pos + n;
    let s = "";
    for (let i = this.pos; i < end; i += 4096)
      s += String.fromCharCode.apply(null, buf.subarray(i, Math.min(end, i + 4096)) as unknown as number[]);
    this.pos = end;
    return s;
  }

  private utf16(n: number): string {
    const units = new Array<number>(n);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++, pos += 2) units[i] = (buf[pos] as number) | ((buf[pos + 1] as number) << 8);
    this.pos = pos;
    let s = "";
    for (let i = 0; i < n; i += 4096) s += String.fromCharCode(...units.slice(i, i + 4096));
    return s;
  }

  private array(depth: number): unknown[] {
    if (depth > MAX_DEPTH) this.fail(`nests deeper than ${MAX_DEPTH}`);
    const n = this.varint();
    if (n > this.buf.length - this.pos) this.fail(`announces ${n} values, more than the body's bytes left`);
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = this.value(depth);
    return out;
  }

  private object(keys: readonly string[], depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) this.fail(`nests deeper than ${MAX_DEPTH}`);
    const o: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const v = this.value(depth);
      if (k === "__proto__")
        Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
      else o[k] = v;
    }
    return o;
  }
}
