/**
 * JsonLines: the NDJSON body of a TM_PANES or TM_LATE message (pane-batch.ts), what engines wrote
 * before the binary encoding (docs/decisions/0047-binary-panes.md) and the JSON path that encoding
 * is checked against (pane-records.test.ts), written straight as UTF-8 bytes, one record's JSON
 * per line, into a buffer that grows and is reused (docs/decisions/0017-engine-throughput.md). The text is byte for byte what
 * `encodePaneBatch(records.map((r) => JSON.stringify(r)))` encodes to UTF-8: same key order,
 * same number text (`String(n)`; NaN and ±Infinity as null), same escapes (lone surrogates as
 * `\udxxx`), `undefined`, functions and symbols left out of objects and null in arrays. Values
 * that are neither plain objects, arrays nor primitives (a Date, anything with `toJSON`) are
 * written by `JSON.stringify` itself. Beside the bytes it counts the UTF-16 units of the JSON
 * text, the measure the batch bound is stated in (emit-group.ts).
 *
 * Pure: no node:* imports, no clock, no env.
 */

import { BodyBuffer } from "./body-buffer.js";
import { numberText } from "./number-text.js";

export type { LineBuffers } from "./body-buffer.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const NEWLINE = 0x0a;
const utf8 = new TextEncoder();

/** The JSON of a deeply frozen object, kept with its UTF-16 units. */
interface FrozenJson {
  readonly bytes: Uint8Array;
  readonly units: number;
}

/**
 * JSON of deeply frozen plain objects (a pane's bias and its spread, a nowcast's error: one frozen
 * object per tracker until its next sample, shared by every pane that carries it), written once
 * and copied after: such an object cannot change, so its text cannot either
 * (docs/decisions/0027-engine-floor.md). Keyed weakly: an entry goes with its object.
 */
const frozenJson = new WeakMap<object, FrozenJson>();
/** Frozen objects that hold something not frozen, or an accessor: written each time. */
const notCached = new WeakSet<object>();

export class JsonLines extends BodyBuffer {
  /** UTF-16 units of the JSON text written so far (newlines included). */
  units = 0;

  /** Appends one record as a line; returns the UTF-16 units of its JSON (without the newline). */
  add(record: object): number {
    if (this.lines > 0) {
      this.byte(NEWLINE);
      this.units++;
    }
    const start = this.units;
    this.value(record, false);
    this.lines++;
    return this.units - start;
  }

  /** Appends a line of JSON text as it is (a line kept in a checkpoint); returns its UTF-16 units. */
  addJson(json: string): number {
    if (this.lines > 0) {
      this.byte(NEWLINE);
      this.units++;
    }
    this.text(json);
    this.lines++;
    return json.length;
  }

  /**
   * Hands over the body up to `bytes` as `take()` does; what follows it (its newline dropped) is
   * kept, as the start of the next body, with its units and lines.
   */
  cut(bytes: number, keptUnits: number, keptLines: number): Uint8Array {
    const old = this.buf;
    const from = this.pos > bytes && old[bytes] === NEWLINE ? bytes + 1 : bytes;
    const kept = this.pos - from;
    this.buf = this.buffers.take(Math.max(old.length, kept));
    this.initial = old.length;
    this.buf.set(old.subarray(from, this.pos));
    this.pos = kept;
    this.units = keptUnits;
    this.lines = keptLines;
    return old.subarray(0, bytes);
  }

  /** Empties the writer; the buffer is kept for the next body. */
  reset(): void {
    this.pos = 0;
    this.units = 0;
    this.lines = 0;
  }

  private byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  /** ASCII text with nothing to escape (literals, number text). */
  private ascii(s: string): void {
    this.room(s.length);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < s.length; i++) buf[pos++] = s.charCodeAt(i);
    this.pos = pos;
    this.units += s.length;
  }

  /** `inArray`: undefined, functions and symbols are null there (they are left out of objects before). */
  private value(v: unknown, inArray: boolean): void {
    switch (typeof v) {
      case "string":
        return this.string(v);
      case "number":
        return this.number(v);
      case "boolean":
        return this.ascii(v ? "true" : "false");
      case "object":
        if (v === null) return this.ascii("null");
        if (Array.isArray(v)) return this.array(v);
        if (isPlain(v)) return this.object(v as Record<string, unknown>);
        return this.foreign(v);
      case "undefined":
      case "function":
      case "symbol":
        if (inArray) return this.ascii("null");
        return this.foreign(v);
      default:
        return this.foreign(v); // bigint: JSON.stringify throws, as it would
    }
  }

  private number(v: number): void {
    if (v !== v || v === Infinity || v === -Infinity) return this.ascii("null");
    if (v >= 0 && v < 100_000 && Number.isInteger(v)) return this.small(v);
    // Timestamps and doubles: their text from the cache (String(v), what JSON.stringify writes).
    this.ascii(numberText(v));
  }

  /** A non-negative integer below 100 000 by its digits (-0 included: "0"). */
  private small(v: number): void {
    this.room(5);
    const buf = this.buf;
    let n = v;
    const digits = n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10_000 ? 4 : 5;
    let pos = this.pos + digits;
    this.pos = pos;
    this.units += digits;
    do {
      const q = (n / 10) | 0;
      buf[--pos] = 0x30 + (n - q * 10);
      n = q;
    } while (n > 0);
  }

  private string(s: string): void {
    this.room(s.length + 2);
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    buf[pos++] = QUOTE;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      // Printable ASCII but the quote and the backslash is written as is; anything else by JSON.stringify.
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return this.escaped(s, start);
      buf[pos++] = c;
    }
    buf[pos++] = QUOTE;
    this.pos = pos;
    this.units += s.length + 2;
  }

  private escaped(s: string, start: number): void {
    this.pos = start;
    this.text(JSON.stringify(s));
  }

  /** JSON text (any Unicode: well-formed, as JSON.stringify escapes lone surrogates) as UTF-8. */
  private text(json: string): void {
    this.room(json.length * 3);
    this.pos += utf8.encodeInto(json, this.buf.subarray(this.pos)).written;
    this.units += json.length;
  }

  private array(a: readonly unknown[]): void {
    this.byte(0x5b);
    this.units++;
    for (let i = 0; i < a.length; i++) {
      if (i > 0) {
        this.byte(COMMA);
        this.units++;
      }
      this.value(a[i], true);
    }
    this.byte(0x5d);
    this.units++;
  }

  private object(o: Record<string, unknown>): void {
    if (!Object.isFrozen(o) || notCached.has(o)) return this.fields(o);
    const cached = frozenJson.get(o);
    if (cached !== undefined) return this.copy(cached);
    const start = this.pos;
    const units = this.units;
    this.fields(o);
    if (deeplyFrozen(o)) frozenJson.set(o, { bytes: this.buf.slice(start, this.pos), units: this.units - units });
    else notCached.add(o);
  }

  private copy(json: FrozenJson): void {
    this.room(json.bytes.length);
    this.buf.set(json.bytes, this.pos);
    this.pos += json.bytes.length;
    this.units += json.units;
  }

  private fields(o: Record<string, unknown>): void {
    this.byte(0x7b);
    this.units++;
    let first = true;
    for (const k in o) {
      const v = o[k];
      const t = typeof v;
      // What only JSON.stringify writes (toJSON, class instances) may write nothing: then no key either.
      let foreign: string | undefined = "";
      if (t === "object") {
        if (v !== null && !Array.isArray(v) && !isPlain(v as object)) foreign = JSON.stringify(v) as string | undefined;
        if (foreign === undefined) continue;
      } else if (t === "undefined" || t === "function" || t === "symbol") continue;
      this.key(k, first);
      first = false;
      if (foreign !== "") this.text(foreign);
      else if (t === "number") this.number(v as number);
      else if (t === "string") this.string(v as string);
      else if (t === "object" && v !== null && !Array.isArray(v)) this.object(v as Record<string, unknown>);
      else this.value(v, false);
    }
    this.byte(0x7d);
    this.units++;
  }

  /** `,"k":` (no comma before the first key); a key with anything to escape goes through `string`. */
  private key(k: string, first: boolean): void {
    const n = k.length;
    this.room(n + 4);
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    if (!first) buf[pos++] = COMMA;
    buf[pos++] = QUOTE;
    for (let i = 0; i < n; i++) {
      const c = k.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) {
        this.pos = first ? start : start + 1;
        if (!first) this.units++;
        this.string(k);
        this.byte(COLON);
        this.units++;
        return;
      }
      buf[pos++] = c;
    }
    buf[pos++] = QUOTE;
    buf[pos++] = COLON;
    this.units += pos - start;
    this.pos = pos;
  }

  /** What only JSON.stringify knows how to write (toJSON, boxed primitives, class instances). */
  private foreign(v: unknown): void {
    const json = JSON.stringify(v) as string | undefined;
    if (json === undefined) throw new TypeError(`a record holds a value JSON cannot write (${typeof v})`);
    this.text(json);
  }
}

/** Frozen, with data properties only, every object in it a plain object or array as deeply frozen. */
function deeplyFrozen(v: object): boolean {
  if (!Object.isFrozen(v)) return false;
  for (const d of Object.values(Object.getOwnPropertyDescriptors(v))) {
    if (d.get !== undefined || d.set !== undefined) return false;
    const x = d.value as unknown;
    if (typeof x === "object" && x !== null && !((Array.isArray(x) || isPlain(x)) && deeplyFrozen(x))) return false;
  }
  return true;
}

/** A plain object (its own enumerable keys are what for…in visits) without toJSON. */
function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== "function";
}
