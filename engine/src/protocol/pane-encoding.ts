/**
 * The binary pane encoding of TM_PANES and TM_LATE message bodies ("TMPN", docs/protocol.md "Pane
 * bodies"; docs/decisions/0047-binary-panes.md): its layout and constants. The writer is
 * PaneRecords (pane-records.ts), the reader pane-records-read.ts. A body is the magic "TMPN", a
 * version byte, then the records (panes or late records) back to back, each one value of the
 * encoding's JSON data model, which starts with a tag byte:
 *
 *   0x00 null · 0x01 false · 0x02 true · 0x80|n an integer 0..127
 *   0x03 varint: a non-negative integer ≤ 2^53 − 1 · 0x04 varint: minus that
 *   0x05 float64 little-endian: any other finite number
 *   0x06 varint n, n bytes: a new ASCII string · 0x07 varint n, 2n bytes: a new string as UTF-16LE
 *   0x08 varint i, or 0x40|i for i < 64: the body's i-th new string again
 *   0x09 varint n, n values: an array
 *   0x0c varint n, n strings (the keys), n values: an object of a new shape
 *   0x0d varint i, or 0x20|i for i < 32: an object of the body's i-th shape, its values in key order
 *
 * Varints are little-endian base 128, at most 8 bytes. Strings and shapes are numbered per body
 * in the order they first appear, so a reader needs nothing but the body.
 *
 * It encodes what JSON text encodes, no more: NaN and ±Infinity as null, −0 as 0, undefined,
 * functions and symbols left out of objects and null in arrays, anything with `toJSON` (or not a
 * plain object or array) as `JSON.parse(JSON.stringify(v))`. So a body is a function of the
 * records' JSON text (a record restored from its JSON encodes to the same bytes, which keeps chunk
 * cuts the same after a restore) and `JSON.stringify` of a decoded record (pane-records-read.ts)
 * is byte for byte the JSON the record had. Field names travel as strings, so any field the core
 * adds travels without a change here.
 *
 * Pure: no node:* imports, no clock, no env.
 */

/** "TMPN": the first bytes of a binary pane body (NDJSON starts with "{", gzip with 1f 8b). */
export const PANE_BODY_MAGIC: readonly number[] = [0x54, 0x4d, 0x50, 0x4e];
/** The version this code writes and the newest it reads. */
export const PANE_BODY_VERSION = 1;
/** Magic and version. */
export const PANE_BODY_HEADER = 5;

export const TAG = {
  NULL: 0x00,
  FALSE: 0x01,
  TRUE: 0x02,
  UINT: 0x03,
  NINT: 0x04,
  F64: 0x05,
  ASCII: 0x06,
  UTF16: 0x07,
  STRING_AGAIN: 0x08,
  ARRAY: 0x09,
  SHAPE: 0x0c,
  SHAPE_AGAIN: 0x0d,
  /** 0x20|i: shape i again (i < 32). */
  SHAPE_SHORT: 0x20,
  /** 0x40|i: string i again (i < 64). */
  STRING_SHORT: 0x40,
  SMALL: 0x80,
} as const;

/** Bytes the encoding spends on a number: what a record's wall-clock field adds to its size. */
export function numberBytes(v: number): number {
  if (v !== v || v === Infinity || v === -Infinity) return 1;
  if (!Number.isInteger(v) || v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER) return 9;
  if (v >= 0 && v < 128) return 1;
  return 1 + varintBytes(Math.abs(v));
}

function varintBytes(n: number): number {
  let bytes = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    bytes++;
  }
  return bytes;
}
