/**
 * The events of one TM_EVENTS message as rows, made objects one at a time (EventRows): a compact
 * batch (event-batch.ts has the layout) decodes into columns, and `event(i)` builds row i's
 * TelemetryEvent when it is asked for. An engine worker queues its partitions' messages until the
 * interleave releases their events (runtime/input/partition-interleave.ts); decoded ahead as
 * objects, every queued event outlived a few young-generation collections and was promoted, so
 * the read-ahead filled the old generation. As columns, a queued message is a few typed arrays and
 * its events are made as they go to the core (docs/decisions/0055-events-as-rows.md).
 *
 * Pure: no node:* imports, no clock, no env.
 */
import type { TelemetryEvent } from "./telemetry-event.js";

/** First byte of a compact batch; an NDJSON batch starts with `{`. */
export const COMPACT_BATCH_MAGIC = 0x00;
export const COMPACT_BATCH_VERSION = 1;
/** A column mode: a decimal exponent 0..9 (value = integer / 10^e), or a raw float64. */
export const RAW_FLOAT = 63;
export const MAX_EXPONENT = 9;
export const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

const utf8Decoder = new TextDecoder();

/** The events of one message, in order. */
export interface EventRows {
  readonly length: number;
  /** Row i's ingest_ts, as stored. */
  ingestTs(i: number): number;
  /** Row i as an event (made on each call for decoded columns: keep it, do not ask again). */
  event(i: number): TelemetryEvent;
}

/** Events already objects (an NDJSON body, tests) as rows. */
export function arrayRows(events: readonly TelemetryEvent[]): EventRows {
  return {
    length: events.length,
    ingestTs: (i) => (events[i] as TelemetryEvent).ingest_ts,
    event: (i) => events[i] as TelemetryEvent,
  };
}

/** A compact batch's columns: per row ingest_ts, ts, status and latency_ms, and its strings' indexes. */
export class CompactRows implements EventRows {
  constructor(
    readonly length: number,
    /** ingest_ts, ts, status, latency_ms of row i at 4i … 4i + 3. */
    private readonly numbers: Float64Array,
    /** service, route, user of row i: indexes into `strings` at 3i … 3i + 2. */
    private readonly names: Int32Array,
    private readonly strings: readonly string[],
  ) {}

  ingestTs(i: number): number {
    return this.numbers[4 * i] as number;
  }

  event(i: number): TelemetryEvent {
    const n = this.numbers;
    const s = this.strings;
    const at = 3 * i;
    return {
      ts: n[4 * i + 1] as number,
      ingest_ts: n[4 * i] as number,
      service: s[this.names[at] as number] as string,
      route: s[this.names[at + 1] as number] as string,
      status: n[4 * i + 2] as number,
      latency_ms: n[4 * i + 3] as number,
      user: s[this.names[at + 2] as number] as string,
    };
  }

  /** Every row as an object. */
  toArray(): TelemetryEvent[] {
    const out = new Array<TelemetryEvent>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.event(i);
    return out;
  }
}

/** Thrown for a compact body that does not decode; the engine's source skips the message. */
function malformed(why: string): Error {
  return new Error(`malformed compact event batch: ${why}`);
}

/** Decodes a compact batch's body (first byte COMPACT_BATCH_MAGIC) into columns; throws when malformed. */
export function decodeCompactRows(b: Uint8Array): CompactRows {
  if (b[1] !== COMPACT_BATCH_VERSION)
    throw malformed(`version ${b[1]} is not ${COMPACT_BATCH_VERSION}: upgrade the engine that reads it`);
  const r = new SextetReader(b, 2);
  const count = r.uint();
  const nStrings = r.uint();
  const ingestMode = r.byte();
  const tsMode = r.byte();
  const statusMode = r.byte();
  const latencyMode = r.byte();
  const tableBytes = r.uint();
  // Every row takes at least 7 bytes and every string a length: bound the allocations by the body.
  if (count * 7 + nStrings > b.length) throw malformed(`${count} events and ${nStrings} strings in ${b.length} bytes`);
  if (![ingestMode, tsMode].every((m) => m === 0 || m === RAW_FLOAT)) throw malformed("bad time mode");
  if (![statusMode, latencyMode].every((m) => m <= MAX_EXPONENT || m === RAW_FLOAT)) throw malformed("bad mode");
  const strings = readTable(r, b, nStrings, tableBytes);
  const numbers = new Float64Array(4 * count);
  const names = new Int32Array(3 * count);
  let ingest = 0;
  for (let i = 0; i < count; i++) {
    ingest = ingestMode === RAW_FLOAT ? r.float() : ingest + r.int();
    numbers[4 * i] = ingest;
    numbers[4 * i + 1] = tsMode === RAW_FLOAT ? r.float() : ingest - r.int();
    numbers[4 * i + 2] = statusMode === RAW_FLOAT ? r.float() : r.int() / (POW10[statusMode] as number);
    numbers[4 * i + 3] = latencyMode === RAW_FLOAT ? r.float() : r.int() / (POW10[latencyMode] as number);
    for (let k = 0; k < 3; k++) {
      const s = r.uint();
      if (s >= nStrings) throw malformed("string index");
      names[3 * i + k] = s;
    }
  }
  if (r.at !== b.length) throw malformed(`${b.length - r.at} bytes left after ${count} events`);
  if (r.rawFloats && !numbers.every(Number.isFinite)) throw malformed("a number that is not finite");
  return new CompactRows(count, numbers, names, strings);
}

/** The string table: the lengths, then the UTF-8 of the strings concatenated. */
function readTable(r: SextetReader, b: Uint8Array, nStrings: number, tableBytes: number): string[] {
  const lengths = new Array<number>(nStrings);
  for (let i = 0; i < nStrings; i++) lengths[i] = r.uint();
  const tableAt = r.at;
  if (tableAt + tableBytes > b.length) throw malformed("string table past the end");
  const text = utf8Decoder.decode(b.subarray(tableAt, tableAt + tableBytes));
  const strings = new Array<string>(nStrings);
  let from = 0;
  for (let i = 0; i < nStrings; i++) {
    const to = from + (lengths[i] as number);
    strings[i] = text.slice(from, to);
    from = to;
  }
  if (from !== text.length) throw malformed("string lengths do not add up to the table");
  r.at = tableAt + tableBytes;
  return strings;
}

class SextetReader {
  /** True once a raw float was read (the only way to a non-finite number). */
  rawFloats = false;
  private readonly f64 = new DataView(new ArrayBuffer(8));

  constructor(
    private readonly b: Uint8Array,
    public at: number,
  ) {}

  byte(): number {
    if (this.at >= this.b.length) throw malformed("truncated");
    return this.b[this.at++] as number;
  }

  uint(): number {
    const b = this.b;
    let x = b[this.at++] as number;
    let v = x & 0x3f;
    let scale = 64;
    while (x & 0x40) {
      x = b[this.at++] as number;
      v += (x & 0x3f) * scale;
      scale *= 64;
      if (scale > 2 ** 60) throw malformed("varint too long");
    }
    if (this.at > b.length) throw malformed("truncated");
    return v;
  }

  int(): number {
    const z = this.uint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  float(): number {
    this.rawFloats = true;
    if (this.at + 12 > this.b.length) throw malformed("truncated");
    for (let w = 0; w < 2; w++) {
      let word = 0;
      for (let k = 0; k < 6; k++) word |= ((this.b[this.at++] as number) & 0x3f) << (6 * k);
      this.f64.setUint32(4 * w, word >>> 0, true);
    }
    return this.f64.getFloat64(0, true);
  }
}
