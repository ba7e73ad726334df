/**
 * Counts the spans of an OTLP/protobuf ExportTraceServiceRequest on the wire, without decoding
 * them (docs/security.md, "Ingest limits"): resource_spans (1) → scope_spans (2) → spans (2).
 * The count stops once it passes `limit`, so a body of millions of tiny spans is refused before
 * any of them becomes an object. Malformed input returns what was counted: the decoder that runs
 * next reports it.
 */
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;

/** Spans in `buf`, or `limit + 1` as soon as there are more than `limit`. */
export function countSpans(buf: Uint8Array, limit: number): number {
  let spans = 0;
  forEachField(buf, 0, buf.length, 1, (rsFrom, rsTo) =>
    forEachField(buf, rsFrom, rsTo, 2, (ssFrom, ssTo) => forEachField(buf, ssFrom, ssTo, 2, () => ++spans <= limit)),
  );
  return Math.min(spans, limit + 1);
}

/**
 * Calls `each(from, to)` for every length-delimited field `field` in buf[from, to); stops (false)
 * when `each` returns false or the wire is malformed.
 */
function forEachField(
  buf: Uint8Array,
  from: number,
  to: number,
  field: number,
  each: (from: number, to: number) => boolean,
): boolean {
  let at = from;
  while (at < to) {
    const tag = varint(buf, at, to);
    if (!tag) return false;
    at = tag.next;
    const wire = tag.value % 8;
    if (wire === VARINT) {
      const v = varint(buf, at, to);
      if (!v) return false;
      at = v.next;
    } else if (wire === FIXED64) at += 8;
    else if (wire === FIXED32) at += 4;
    else if (wire === LEN) {
      const len = varint(buf, at, to);
      if (!len || len.next + len.value > to) return false;
      if (Math.floor(tag.value / 8) === field && !each(len.next, len.next + len.value)) return false;
      at = len.next + len.value;
    } else return false;
  }
  return true;
}

function varint(buf: Uint8Array, from: number, to: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let at = from; at < to && at < from + 10; at++) {
    const b = buf[at] as number;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return { value, next: at + 1 };
    scale *= 128;
  }
  return undefined;
}
