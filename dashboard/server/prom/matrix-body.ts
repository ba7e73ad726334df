/**
 * A range result as Prometheus's JSON, written straight into bytes (docs/prometheus-api.md,
 * "Sizing"). Each series' points go through one JSON.stringify of [t0, v0, t1, v1, …] (seconds and
 * values): JSON writes a finite number as String(v) does — the shortest round-trip decimal, as
 * Prometheus writes values — for a fraction of what String(v) costs value by value. One pass over
 * those bytes then writes `[t0,"v0"],[t1,"v1"]`; a value JSON cannot write as Prometheus does (null
 * for NaN and ±Inf, an exponent) is written by formatValue instead.
 */
import { formatValue, type RangeSeries } from "../promql/index.js";
import type { BodyWriter } from "./body-writer.js";

const COMMA = 44;
const CLOSE = 93;
const OPEN = 91;
const QUOTE = 34;
const LOWER_E = 101;
const LOWER_N = 110;

/** `{"resultType":"matrix","result":[{"metric":{…},"values":[[t,"v"],…]},…]}` */
export function writeMatrix(w: BodyWriter, series: readonly RangeSeries[]): void {
  w.ascii('{"resultType":"matrix","result":[');
  const scratch = new Scratch();
  series.forEach((s, n) => {
    w.text(`${n === 0 ? "" : ","}{"metric":${JSON.stringify(s.labels)},"values":[`);
    writePoints(w, s, scratch);
    w.ascii("]}");
  });
  w.ascii("]}");
}

/** Points per JSON.stringify: its text of a whole series is a string whose flattening costs more than writing it. */
const CHUNK = 256;

class Scratch {
  bytes = Buffer.allocUnsafe(1 << 14);
  flat: number[] = [];

  /** The JSON text of [t_from / 1000, v_from, …] up to point `to`, as bytes; returns their length. */
  load(s: RangeSeries, from: number, to: number): number {
    const flat = this.flat;
    const { times, values } = s;
    flat.length = 0;
    for (let i = from; i < to; i++) flat.push((times[i] as number) / 1000, values[i] as number);
    const text = JSON.stringify(flat);
    if (text.length > this.bytes.length) this.bytes = Buffer.allocUnsafe(text.length * 2);
    return this.bytes.write(text, 0, "latin1");
  }
}

/** `[t0,"v0"],[t1,"v1"],…` from the JSON bytes of [t0, v0, t1, v1, …], a chunk at a time. */
function writePoints(w: BodyWriter, s: RangeSeries, scratch: Scratch): void {
  for (let from = 0; from < s.times.length; from += CHUNK)
    writeChunk(w, s, scratch, from, Math.min(s.times.length, from + CHUNK));
}

function writeChunk(w: BodyWriter, s: RangeSeries, scratch: Scratch, from: number, to: number): void {
  const len = scratch.load(s, from, to);
  const src = scratch.bytes;
  w.room(len + 4 * (to - from));
  let out = w.buf;
  let n = w.n;
  let at = 1; // past "["
  for (let i = from; i < to; i++) {
    if (i > 0) out[n++] = COMMA;
    out[n++] = OPEN;
    // The time, as String(ms / 1000) writes it: JSON writes it the same way.
    let c = src[at++] as number;
    while (c !== COMMA) {
      out[n++] = c;
      c = src[at++] as number;
    }
    out[n++] = COMMA;
    out[n++] = QUOTE;
    const valueAt = n;
    let plain = true;
    c = src[at++] as number;
    while (c !== COMMA && c !== CLOSE) {
      if (c === LOWER_E || c === LOWER_N) plain = false;
      out[n++] = c;
      c = src[at++] as number;
    }
    if (!plain) {
      w.n = valueAt;
      w.ascii(formatValue(s.values[i] as number));
      w.room(len - at + 4 * (to - i));
      out = w.buf;
      n = w.n;
    }
    out[n++] = QUOTE;
    out[n++] = CLOSE;
  }
  w.n = n;
}
