/**
 * PaneRecords: writes the body of a TM_PANES or TM_LATE message in the binary pane encoding
 * (pane-encoding.ts has the layout; docs/protocol.md "Pane bodies";
 * docs/decisions/0047-binary-panes.md) into a buffer that grows and is reused. A body is a
 * function of its records' JSON text, so a record restored from its JSON encodes to the same
 * bytes; `JSON.stringify` of a decoded record is byte for byte the JSON it had.
 *
 * Pure: no node:* imports, no clock, no env.
 */

import { BodyBuffer } from "./body-buffer.js";
import { PANE_BODY_HEADER, PANE_BODY_MAGIC, PANE_BODY_VERSION, TAG } from "./pane-encoding.js";

/** An object shape (its keys in order) as a path in the writer's trie; `body` is the body it was last defined in. */
interface ShapeNode {
  readonly next: Map<string, ShapeNode>;
  /** The key last followed from here and where it led: objects of one shape follow the same path. */
  lastKey: string | undefined;
  lastNext: ShapeNode | undefined;
  body: number;
  id: number;
}

const node = (): ShapeNode => ({ next: new Map(), lastKey: undefined, lastNext: undefined, body: -1, id: 0 });
/** The shape trie is dropped at the start of a body once it holds this many nodes (data-dependent keys). */
const MAX_SHAPE_NODES = 4096;

export class PaneRecords extends BodyBuffer {
  private view: DataView = new DataView(new ArrayBuffer(0));
  /** The body's strings so far, by their number (the order they were first written). */
  private readonly strings = new Map<string, number>();
  private readonly order: string[] = [];
  /** Object shapes: every key sequence seen (bounded), and those defined in this body, in order. */
  private shapes = node();
  private shapeNodes = 0;
  private readonly defined: ShapeNode[] = [];
  private bodyNo = 0;
  /** Where the last record started, and the strings and shapes before it (`dropLast`). */
  private lastPos = 0;
  private lastStrings = 0;
  private lastShapes = 0;
  /** The values of the objects being written, innermost last (`object`); `top` is the next free slot. */
  private readonly values: unknown[] = [];
  private top = 0;

  /** Appends one record; returns the bytes it took. */
  add(record: object): number {
    if (this.pos === 0) this.header();
    this.lastPos = this.pos;
    this.lastStrings = this.order.length;
    this.lastShapes = this.defined.length;
    this.top = 0;
    this.value(record, false);
    this.lines++;
    return this.pos - this.lastPos;
  }

  /** Takes the last record back out, with the strings it introduced (it goes into the next body). */
  dropLast(): void {
    for (let i = this.order.length - 1; i >= this.lastStrings; i--) this.strings.delete(this.order[i] as string);
    this.order.length = this.lastStrings;
    for (let i = this.lastShapes; i < this.defined.length; i++) (this.defined[i] as ShapeNode).body = -1;
    this.defined.length = this.lastShapes;
    this.pos = this.lastPos;
    this.lines--;
  }

  /** Empties the writer (its strings and shapes too); the buffer is kept for the next body. */
  reset(): void {
    this.pos = 0;
    this.lines = 0;
    this.strings.clear();
    this.order.length = 0;
    this.defined.length = 0;
    this.bodyNo++;
    if (this.shapeNodes > MAX_SHAPE_NODES) {
      this.shapes = node();
      this.shapeNodes = 0;
    }
  }

  private header(): void {
    this.room(PANE_BODY_HEADER);
    this.buf.set(PANE_BODY_MAGIC, 0);
    this.buf[4] = PANE_BODY_VERSION;
    this.pos = PANE_BODY_HEADER;
  }

  protected override grew(): void {
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  private tag(t: number): void {
    this.room(1);
    this.buf[this.pos++] = t;
  }

  private varint(n: number): void {
    this.room(8);
    const buf = this.buf;
    let pos = this.pos;
    if (n >= 0x80000000) {
      // Above 31 bits (timestamps): the low 28 bits by bit operations, the rest as a 32-bit int.
      const low = n % 0x10000000;
      buf[pos] = (low & 127) | 128;
      buf[pos + 1] = ((low >>> 7) & 127) | 128;
      buf[pos + 2] = ((low >>> 14) & 127) | 128;
      buf[pos + 3] = ((low >>> 21) & 127) | 128;
      pos += 4;
      n = (n - low) / 0x10000000;
    }
    while (n >= 128) {
      buf[pos++] = (n & 127) | 128;
      n >>>= 7;
    }
    buf[pos++] = n;
    this.pos = pos;
  }

  /** `inArray`: undefined, functions and symbols are null there (objects leave them out before). */
  private value(v: unknown, inArray: boolean): void {
    switch (typeof v) {
      case "number":
        return this.number(v);
      case "string":
        return this.string(v);
      case "boolean":
        return this.tag(v ? TAG.TRUE : TAG.FALSE);
      case "object":
        if (v === null) return this.tag(TAG.NULL);
        if (Array.isArray(v)) return this.array(v);
        if (isPlain(v)) return this.object(v as Record<string, unknown>);
        return this.foreign(v, inArray);
      case "undefined":
      case "function":
      case "symbol":
        if (inArray) return this.tag(TAG.NULL);
        return this.foreign(v, inArray);
      default:
        return this.foreign(v, inArray); // bigint: JSON.stringify throws, as it would
    }
  }

  private number(v: number): void {
    if (v !== v || v === Infinity || v === -Infinity) return this.tag(TAG.NULL);
    if (Number.isInteger(v)) {
      if (v >= 0 && v < 128) return this.tag(TAG.SMALL | v); // −0 too: JSON writes it as 0
      if (v <= Number.MAX_SAFE_INTEGER && v >= -Number.MAX_SAFE_INTEGER) {
        this.tag(v > 0 ? TAG.UINT : TAG.NINT);
        return this.varint(v > 0 ? v : -v);
      }
    }
    this.room(9);
    this.buf[this.pos] = TAG.F64;
    this.view.setFloat64(this.pos + 1, v, true);
    this.pos += 9;
  }

  private string(s: string): void {
    const again = this.strings.get(s);
    if (again !== undefined) {
      if (again < 64) return this.tag(TAG.STRING_SHORT | again);
      this.tag(TAG.STRING_AGAIN);
      return this.varint(again);
    }
    this.strings.set(s, this.order.length);
    this.order.push(s);
    const n = s.length;
    this.room(n * 2 + 9);
    const buf = this.buf;
    const start = this.pos;
    buf[start] = TAG.ASCII;
    this.pos = start + 1;
    this.varint(n);
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return this.utf16(s, start);
      buf[pos++] = c;
    }
    this.pos = pos;
  }

  /** A string with a code unit past ASCII, as its UTF-16 units (lone surrogates kept as they are). */
  private utf16(s: string, start: number): void {
    this.buf[start] = TAG.UTF16;
    this.pos = start + 1;
    this.varint(s.length);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      buf[pos++] = c & 0xff;
      buf[pos++] = c >>> 8;
    }
    this.pos = pos;
  }

  private array(a: readonly unknown[]): void {
    this.tag(TAG.ARRAY);
    this.varint(a.length);
    for (let i = 0; i < a.length; i++) this.value(a[i], true);
  }

  /**
   * Its shape (defined the first time in a body, named after), then its values in key order. One
   * walk of its keys reads each value once, onto `values` (above the enclosing objects' values),
   * and the writes read them from there.
   */
  private object(o: Record<string, unknown>): void {
    const values = this.values;
    const base = this.top;
    let top = base;
    let shape = this.shapes;
    for (const k in o) {
      const v = o[k];
      const t = typeof v;
      if (t === "undefined" || t === "symbol") continue;
      if (t === "function") {
        // An own toJSON makes the object JSON.stringify's to write (isPlain checks the prototype only).
        if (k === "toJSON") return this.object(JSON.parse(JSON.stringify(o)) as Record<string, unknown>);
        continue;
      }
      // What only JSON.stringify writes (class instances, Dates): the object as JSON data, written again.
      if (t === "object" && v !== null && !Array.isArray(v) && !isPlain(v as object))
        return this.object(JSON.parse(JSON.stringify(o)) as Record<string, unknown>);
      shape = this.step(shape, k);
      values[top++] = v;
    }
    this.top = top;
    if (shape.body === this.bodyNo) {
      if (shape.id < 32) this.tag(TAG.SHAPE_SHORT | shape.id);
      else {
        this.tag(TAG.SHAPE_AGAIN);
        this.varint(shape.id);
      }
    } else this.define(shape, o, top - base);
    for (let i = base; i < top; i++) {
      const v = values[i];
      if (typeof v === "number") this.number(v);
      else if (typeof v === "string") this.string(v);
      else this.value(v, false);
    }
    this.top = base;
  }

  /** A shape first met in this body: numbered, and written as its keys. */
  private define(shape: ShapeNode, o: Record<string, unknown>, n: number): void {
    shape.body = this.bodyNo;
    shape.id = this.defined.length;
    this.defined.push(shape);
    this.tag(TAG.SHAPE);
    this.varint(n);
    for (const k in o) {
      const t = typeof o[k];
      if (t !== "undefined" && t !== "function" && t !== "symbol") this.string(k);
    }
  }

  /** The shape trie's node after `k` (the key last followed from `from`, checked first). */
  private step(from: ShapeNode, k: string): ShapeNode {
    if (from.lastKey === k) return from.lastNext as ShapeNode;
    let next = from.next.get(k);
    if (next === undefined) {
      from.next.set(k, (next = node()));
      this.shapeNodes++;
    }
    from.lastKey = k;
    from.lastNext = next;
    return next;
  }

  /** What only JSON.stringify knows how to write: its JSON, parsed back, encoded. */
  private foreign(v: unknown, inArray: boolean): void {
    const json = JSON.stringify(v) as string | undefined;
    if (json === undefined) {
      if (inArray) return this.tag(TAG.NULL);
      throw new TypeError(`a record holds a value JSON cannot write (${typeof v})`);
    }
    this.value(JSON.parse(json), inArray);
  }
}

/**
 * A plain object (its own enumerable keys are what for…in visits); one with an own toJSON is found
 * as its keys are walked (`object`). A toJSON put on Object.prototype itself is not honoured.
 */
function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
