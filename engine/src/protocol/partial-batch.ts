/**
 * TM_PARTIALS message bodies: what a stage-1 engine worker sends the merge stage
 * (docs/decisions/0029-two-stage-dataflow.md). One body covers an interval [from, to) of the
 * worker's log time: every item of its partitions whose interleaved ingest_ts falls in it is accounted
 * for. Its data is that of the tick starting at `from` (`tickMs` of log time): per slice of each
 * slice grid and group key, the aggregate of the tick's events (the RequestAggregate codec); ticks
 * after it, up to `to`, held no event. `clocks` are the partitions that had events in the tick,
 * with their clocks after it.
 *
 *   "TMPB" | u8 version | u32 JSON length | JSON header | aggregate bytes, in delta order
 *
 * Invariant: a body decodes only if every field is what the header says — finite times,
 * from < to, from on the tick grid, each delta's bytes inside the body and all of them used — so
 * a merge operator never merges part of a body.
 *
 * Pure: no node:* imports, no clock, no env.
 */

export const PARTIAL_BATCH_VERSION = 1;
const MAGIC = [0x54, 0x4d, 0x50, 0x42]; // "TMPB"
const PREFIX = 9;

/** The group key of the numbers across every service. Ingest's `/v1/events` refuses it as a service name. */
export const ALL_SERVICES = "*";

/** The tick of log time a worker's partial batches are cut by (docs/decisions/0029-two-stage-dataflow.md). */
export const PARTIAL_TICK_MS = 100;

/** A partition's clock after the tick (only partitions with events in it are listed). */
export interface PartitionProgress {
  /** TM_EVENTS partition id. */
  partition: number;
  /** Largest event time of its records so far. */
  maxTs: number;
  /** Interleaved ingest_ts of its last record. */
  lastEventAt: number;
  /** Its records in the tick. */
  events: number;
  /**
   * Per percentile-watermark policy: the q-quantile of the partition's recent arrival delays after
   * the tick, as the single-stage core keeps it (watermark.ts, DelaySample). Absent without such a policy.
   */
  delays?: Record<string, number>;
}

/** The aggregate of the tick's events of one slice and group key. */
export interface PartialDelta {
  /** The slice grid's slice length (it names the grid). */
  sliceMs: number;
  sliceStart: number;
  /** Group key: ALL_SERVICES, or a service whose routes span partitions. */
  service: string;
  /** RequestAggregate bytes. */
  aggregate: Uint8Array;
}

export interface PartialBatch {
  /** The stage-1 worker's name (its partitions, e.g. "0-3"). */
  worker: string;
  /** TM_EVENTS partitions the worker owns: the body speaks for all of them. */
  partitions: number[];
  tickMs: number;
  from: number;
  to: number;
  clocks: PartitionProgress[];
  deltas: PartialDelta[];
  /**
   * The merge partitions the worker cut its batch by (docs/decisions/0033-merge-partitions.md);
   * absent: 1. A merge operator refuses a batch cut for another count: its keys would be split
   * otherwise than the other workers'.
   */
  mergePartitions?: number;
  /**
   * The restore epoch of the worker (docs/decisions/0057-elastic-workers.md; absent: 0): a merge
   * operator in a later epoch ignores it, as output of a run rolled back to a savepoint.
   */
  epoch?: number;
}

/** A body that does not decode: `field` names what is wrong. Code TM_PARTIAL_MALFORMED. */
export class PartialBatchError extends Error {
  readonly code = "TM_PARTIAL_MALFORMED";
  constructor(
    readonly field: string,
    /** What is wrong with the field (the message without its prefix). */
    readonly why: string,
  ) {
    super(`malformed partial batch: ${field} ${why}`);
    this.name = "PartialBatchError";
  }
}

/** Subject of merge partition `m` in TM_PARTIALS. */
export function partialsSubject(mergePartition: number): string {
  return `tm.partials.${mergePartition}`;
}

const utf8 = new TextEncoder();
const text = new TextDecoder("utf-8", { fatal: true });

export function encodePartialBatch(b: PartialBatch): Uint8Array {
  const header = {
    worker: b.worker,
    partitions: b.partitions,
    tickMs: b.tickMs,
    from: b.from,
    to: b.to,
    clocks: b.clocks.map((c) =>
      c.delays === undefined
        ? [c.partition, c.maxTs, c.lastEventAt, c.events]
        : [c.partition, c.maxTs, c.lastEventAt, c.events, c.delays],
    ),
    deltas: b.deltas.map((d) => [d.sliceMs, d.sliceStart, d.service, d.aggregate.length]),
    ...(b.mergePartitions !== undefined && b.mergePartitions > 1 ? { mergePartitions: b.mergePartitions } : {}),
    ...(b.epoch !== undefined && b.epoch > 0 ? { epoch: b.epoch } : {}),
  };
  const json = utf8.encode(JSON.stringify(header));
  let size = PREFIX + json.length;
  for (const d of b.deltas) size += d.aggregate.length;
  const out = new Uint8Array(size);
  out.set(MAGIC, 0);
  out[4] = PARTIAL_BATCH_VERSION;
  new DataView(out.buffer).setUint32(5, json.length);
  out.set(json, PREFIX);
  let at = PREFIX + json.length;
  for (const d of b.deltas) {
    out.set(d.aggregate, at);
    at += d.aggregate.length;
  }
  return out;
}

/** Decodes and checks a body; throws PartialBatchError naming the field. Aggregates are views into `body`. */
export function decodePartialBatch(body: Uint8Array): PartialBatch {
  if (body.length < PREFIX || MAGIC.some((m, i) => body[i] !== m))
    throw new PartialBatchError("magic", "is not TMPB: not a partial batch");
  if (body[4] !== PARTIAL_BATCH_VERSION)
    throw new PartialBatchError("version", `${body[4]} is not ${PARTIAL_BATCH_VERSION}: upgrade the merge operator`);
  const jsonLength = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(5);
  if (PREFIX + jsonLength > body.length) throw new PartialBatchError("header", "runs past the end of the body");
  let h: unknown;
  try {
    h = JSON.parse(text.decode(body.subarray(PREFIX, PREFIX + jsonLength)));
  } catch {
    throw new PartialBatchError("header", "is not UTF-8 JSON");
  }
  const r = record(h, "header");
  const tickMs = positive(r.tickMs, "tickMs");
  const from = time(r.from, "from");
  const to = time(r.to, "to");
  if (!(from < to)) throw new PartialBatchError("to", `${to} is not after from ${from}`);
  if (from % tickMs !== 0) throw new PartialBatchError("from", `${from} is not on the ${tickMs} ms tick grid`);
  const batch: PartialBatch = {
    worker: name(r.worker, "worker"),
    partitions: list(r.partitions, "partitions").map((p, i) => partition(p, `partitions[${i}]`)),
    tickMs,
    from,
    to,
    clocks: list(r.clocks, "clocks").map((c, i) => clockOf(c, `clocks[${i}]`)),
    deltas: [],
  };
  if (r.mergePartitions !== undefined) batch.mergePartitions = positive(r.mergePartitions, "mergePartitions");
  if (r.epoch !== undefined) batch.epoch = count(r.epoch, "epoch");
  let at = PREFIX + jsonLength;
  for (const [i, d] of list(r.deltas, "deltas").entries()) {
    const f = `deltas[${i}]`;
    const t = tuple(d, 4, f);
    const length = count(t[3], `${f}.length`);
    if (at + length > body.length) throw new PartialBatchError(`${f}.length`, "runs past the end of the body");
    batch.deltas.push({
      sliceMs: positive(t[0], `${f}.sliceMs`),
      sliceStart: time(t[1], `${f}.sliceStart`),
      service: name(t[2], `${f}.service`),
      aggregate: body.subarray(at, at + length),
    });
    at += length;
  }
  if (at !== body.length) throw new PartialBatchError("deltas", `leave ${body.length - at} bytes unread`);
  return batch;
}

function clockOf(c: unknown, f: string): PartitionProgress {
  const t = list(c, f);
  if (t.length !== 4 && t.length !== 5) throw new PartialBatchError(f, `has ${t.length} fields, not 4 or 5`);
  const clock: PartitionProgress = {
    partition: partition(t[0], `${f}.partition`),
    maxTs: time(t[1], `${f}.maxTs`),
    lastEventAt: time(t[2], `${f}.lastEventAt`),
    events: count(t[3], `${f}.events`),
  };
  if (t.length === 5) clock.delays = delaysOf(t[4], `${f}.delays`);
  return clock;
}

function delaysOf(v: unknown, f: string): Record<string, number> {
  const r = record(v, f);
  const out: Record<string, number> = {};
  for (const [k, d] of Object.entries(r)) {
    if (typeof d !== "number" || !Number.isFinite(d))
      throw new PartialBatchError(`${f}.${k}`, "is not a finite delay in ms");
    out[name(k, `${f} key`)] = d;
  }
  return out;
}

function record(v: unknown, f: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new PartialBatchError(f, "is not an object");
  return v as Record<string, unknown>;
}

function list(v: unknown, f: string): unknown[] {
  if (!Array.isArray(v)) throw new PartialBatchError(f, "is not a list");
  return v;
}

function tuple(v: unknown, n: number, f: string): unknown[] {
  const t = list(v, f);
  if (t.length !== n) throw new PartialBatchError(f, `has ${t.length} fields, not ${n}`);
  return t;
}

function time(v: unknown, f: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new PartialBatchError(f, "is not a finite time in ms");
  return v;
}

function positive(v: unknown, f: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v <= 0)
    throw new PartialBatchError(f, "is not a positive integer");
  return v;
}

function count(v: unknown, f: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new PartialBatchError(f, "is not a count >= 0");
  return v;
}

function partition(v: unknown, f: string): number {
  return count(v, f);
}

function name(v: unknown, f: string): string {
  if (typeof v !== "string" || v.length === 0 || v.length > 256)
    throw new PartialBatchError(f, "is not a name of 1-256 characters");
  return v;
}
