/**
 * The TM_EVENTS message body: a batch of normalized events of one partition, in one of two
 * encodings told apart by the first byte (docs/decisions/0012-batched-transport.md, "Event
 * batches"):
 *
 * - NDJSON (ADR 0002): one event per line, fields in the recording order. Every message written
 *   before the compact batch, the recording format, and what tools and tests may still write.
 * - Compact, version 1: byte 0x00, then the version, then the batch as varints and one UTF-8
 *   string table (services, routes and users interned per batch). Every byte outside the string
 *   table is below 0x80, so the body is valid UTF-8 and survives a round trip through a string
 *   (`msg.string()` in tools and tests) unchanged.
 *
 * `decodeEventBatch` reads both, from bytes or from a string.
 *
 * Pure: no node:* imports, no clock, no env.
 */
import {
  COMPACT_BATCH_MAGIC,
  COMPACT_BATCH_VERSION,
  decodeCompactRows,
  MAX_EXPONENT,
  POW10,
  RAW_FLOAT,
} from "./event-rows.js";
import type { TelemetryEvent } from "./telemetry-event.js";

export { COMPACT_BATCH_MAGIC, COMPACT_BATCH_VERSION };

const SAFE = 2 ** 52;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** NDJSON, one TelemetryEvent per line in the fixed field order of the recording format (ADR 0002). */
export function encodeEventBatch(events: readonly TelemetryEvent[]): string {
  let out = "";
  for (const e of events) {
    out +=
      `{"ts":${e.ts},"ingest_ts":${e.ingest_ts},"service":${JSON.stringify(e.service)},` +
      `"route":${JSON.stringify(e.route)},"status":${e.status},"latency_ms":${e.latency_ms},` +
      `"user":${JSON.stringify(e.user)}}\n`;
  }
  return out;
}

/** True when the body is a compact batch (else NDJSON). */
export function isCompactEventBatch(body: string | Uint8Array): boolean {
  return typeof body === "string" ? body.charCodeAt(0) === COMPACT_BATCH_MAGIC : body[0] === COMPACT_BATCH_MAGIC;
}

/**
 * Decodes a batch in either encoding. Throws on a malformed body; an NDJSON line may still hold
 * an event with missing or mistyped fields (the engine's source checks them), a compact batch
 * cannot.
 */
export function decodeEventBatch(body: string | Uint8Array): TelemetryEvent[] {
  if (typeof body === "string") {
    return isCompactEventBatch(body) ? decodeCompactRows(utf8Encoder.encode(body)).toArray() : decodeNdjson(body);
  }
  return isCompactEventBatch(body) ? decodeCompactRows(body).toArray() : decodeNdjson(utf8Decoder.decode(body));
}

function decodeNdjson(body: string): TelemetryEvent[] {
  const out: TelemetryEvent[] = [];
  let start = 0;
  while (start < body.length) {
    let end = body.indexOf("\n", start);
    if (end < 0) end = body.length;
    if (end > start) out.push(JSON.parse(body.slice(start, end)) as TelemetryEvent);
    start = end + 1;
  }
  return out;
}

/**
 * The compact batch, version 1:
 *
 *     0x00 version count strings modes[4] tableBytes length[strings] table rows[count]
 *
 * Varints are little-endian groups of 6 bits, 0x40 marking that another group follows; signed
 * ones are zigzag-coded. `modes` are those of ingest_ts, ts, status and latency_ms: a decimal
 * exponent 0..9 (ingest_ts and ts: 0 only) or 63 for a raw float64 (64 bits as 12 groups). The
 * table is the UTF-8 of the distinct strings concatenated, `length` their UTF-16 lengths. A row
 * is ingest_ts (delta from the previous row's, the first from 0), ingest_ts − ts, status,
 * latency_ms (as integer × 10^−e), then the table indices of service, route and user.
 */
export function encodeCompactEventBatch(events: readonly TelemetryEvent[]): Uint8Array {
  if (!compactEncodable(events))
    throw new TypeError(
      "a string holds a lone surrogate, which UTF-8 cannot carry: write NDJSON (encodeEventBatchBody)",
    );
  return encodeCompact(events);
}

/**
 * The body ingest and backfill write: a compact batch, or NDJSON when a string holds a lone
 * surrogate (UTF-8 cannot carry it; JSON escapes it).
 */
export function encodeEventBatchBody(events: readonly TelemetryEvent[]): Uint8Array {
  return compactEncodable(events) ? encodeCompact(events) : utf8Encoder.encode(encodeEventBatch(events));
}

function encodeCompact(events: readonly TelemetryEvent[]): Uint8Array {
  const strings = new Map<string, number>();
  const intern = (s: string): void => {
    if (!strings.has(s)) strings.set(s, strings.size);
  };
  for (const e of events) {
    intern(e.service);
    intern(e.route);
    intern(e.user);
  }
  const table = utf8Encoder.encode([...strings.keys()].join(""));
  const modes = [timeMode(events), tsMode(events), decimalMode(events, "status"), decimalMode(events, "latency_ms")];
  const w = new SextetWriter(16 + table.length + strings.size * 2 + events.length * 16);
  w.byte(COMPACT_BATCH_MAGIC);
  w.byte(COMPACT_BATCH_VERSION);
  w.uint(events.length);
  w.uint(strings.size);
  for (const m of modes) w.byte(m);
  w.uint(table.length);
  for (const s of strings.keys()) w.uint(s.length);
  w.bytes(table);
  const [ingestMode, tsMode_, statusMode, latencyMode] = modes as [number, number, number, number];
  let prev = 0;
  for (const e of events) {
    if (ingestMode === RAW_FLOAT) w.float(e.ingest_ts);
    else w.int(e.ingest_ts - prev);
    prev = e.ingest_ts;
    if (tsMode_ === RAW_FLOAT) w.float(e.ts);
    else w.int(e.ingest_ts - e.ts);
    w.decimal(e.status, statusMode);
    w.decimal(e.latency_ms, latencyMode);
    w.uint(strings.get(e.service) as number);
    w.uint(strings.get(e.route) as number);
    w.uint(strings.get(e.user) as number);
  }
  return w.done();
}

/** True when every string of the batch survives UTF-8 (no lone surrogate): the compact batch can carry it. */
export function compactEncodable(events: readonly TelemetryEvent[]): boolean {
  for (const e of events) if (!wellFormed(e.service) || !wellFormed(e.route) || !wellFormed(e.user)) return false;
  return true;
}

function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c > 0xdbff) return false;
    const d = s.charCodeAt(++i);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
  }
  return true;
}

/** ingest_ts: integer deltas when every value is a safe integer and every delta fits, else raw floats. */
function timeMode(events: readonly TelemetryEvent[]): number {
  let prev = 0;
  for (const e of events) {
    if (!Number.isSafeInteger(e.ingest_ts) || Math.abs(e.ingest_ts - prev) > SAFE) return RAW_FLOAT;
    prev = e.ingest_ts;
  }
  return 0;
}

/** ts: integer offsets from ingest_ts when both are safe integers and the offset fits, else raw floats. */
function tsMode(events: readonly TelemetryEvent[]): number {
  for (const e of events)
    if (!Number.isSafeInteger(e.ts) || !Number.isSafeInteger(e.ingest_ts) || Math.abs(e.ingest_ts - e.ts) > SAFE)
      return RAW_FLOAT;
  return 0;
}

/** The smallest exponent e at which every value is exactly integer / 10^e, or RAW_FLOAT. */
function decimalMode(events: readonly TelemetryEvent[], field: "status" | "latency_ms"): number {
  let mode = 0;
  for (const e of events) {
    const x = e[field];
    while (mode <= MAX_EXPONENT && !exactAt(x, mode)) mode++;
    if (mode > MAX_EXPONENT) return RAW_FLOAT;
  }
  // A value exact at a smaller exponent may not be at the batch's (its scaled integer unsafe): check all.
  for (const e of events) if (!exactAt(e[field], mode)) return RAW_FLOAT;
  return mode;
}

/**
 * m / 10^e is the double nearest to the decimal m·10^−e (both exact, the division correctly
 * rounded): what parsing that decimal gives. So the check is exact, not approximate.
 */
function exactAt(x: number, e: number): boolean {
  const m = Math.round(x * (POW10[e] as number));
  return Math.abs(m) <= SAFE && m / (POW10[e] as number) === x;
}

class SextetWriter {
  private buf: Uint8Array;
  private at = 0;
  private readonly f64 = new DataView(new ArrayBuffer(8));

  constructor(capacity: number) {
    this.buf = new Uint8Array(capacity);
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** A non-negative safe integer. */
  uint(v: number): void {
    this.room(10);
    while (v >= 64) {
      this.buf[this.at++] = 0x40 | (v % 64);
      v = Math.floor(v / 64);
    }
    this.buf[this.at++] = v;
  }

  /** A safe integer, zigzag-coded. */
  int(v: number): void {
    this.uint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  decimal(x: number, mode: number): void {
    if (mode === RAW_FLOAT) this.float(x);
    else this.int(Math.round(x * (POW10[mode] as number)));
  }

  /** 64 bits in 12 groups of 6 (low word first), none with the continuation bit. */
  float(x: number): void {
    this.room(12);
    this.f64.setFloat64(0, x, true);
    for (const word of [this.f64.getUint32(0, true), this.f64.getUint32(4, true)])
      for (let k = 0; k < 6; k++) this.buf[this.at++] = (word >>> (6 * k)) & 0x3f;
  }

  done(): Uint8Array {
    return this.buf.subarray(0, this.at);
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
  }
}
