/**
 * A parsed batch as it crosses from a parse worker to the event loop: numbers in typed arrays and
 * strings interned once, so the transfer moves buffers (no copy) and the event loop only builds
 * the event objects (docs/ingest.md, "Parsing off the event loop").
 */
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import type { RecordError, RejectReason } from "../events/normalize-event.js";
import { RecordBatch } from "../events/record-batch.js";
import type { Parsed } from "./parse-job.js";

export interface PackedBatch {
  /** ts, status, latency_ms of each event. */
  readonly nums: Float64Array;
  /** service, route, user of each event, as indexes into `strings`. */
  readonly strs: Uint32Array;
  /** Each event's record index. */
  readonly index: Float64Array;
  readonly strings: string[];
  readonly errors: RecordError[];
  readonly rejected: number;
  readonly clamped: number;
  readonly rejectedBy: Record<RejectReason, number>;
  readonly records: number;
  readonly skipped: number;
}

export function packBatch({ batch, skipped }: Parsed): { packed: PackedBatch; transfer: ArrayBuffer[] } {
  const n = batch.events.length;
  const nums = new Float64Array(n * 3);
  const strs = new Uint32Array(n * 3);
  const index = new Float64Array(batch.eventIndex);
  const ids = new Map<string, number>();
  const id = (s: string): number => {
    let i = ids.get(s);
    if (i === undefined) ids.set(s, (i = ids.size));
    return i;
  };
  for (let i = 0; i < n; i++) {
    const e = batch.events[i] as TelemetryEvent;
    nums[3 * i] = e.ts;
    nums[3 * i + 1] = e.status;
    nums[3 * i + 2] = e.latency_ms;
    strs[3 * i] = id(e.service);
    strs[3 * i + 1] = id(e.route);
    strs[3 * i + 2] = id(e.user);
  }
  const packed: PackedBatch = {
    nums,
    strs,
    index,
    strings: [...ids.keys()],
    errors: batch.errors,
    rejected: batch.rejected,
    clamped: batch.clamped,
    rejectedBy: batch.rejectedBy,
    records: batch.recordCount,
    skipped,
  };
  return { packed, transfer: [nums.buffer, strs.buffer, index.buffer] };
}

export function unpackBatch(p: PackedBatch, maxEvents: number): Parsed {
  const n = p.index.length;
  const events: TelemetryEvent[] = new Array(n);
  const eventIndex: number[] = new Array(n);
  const { nums, strs, strings } = p;
  for (let i = 0; i < n; i++) {
    events[i] = {
      ts: nums[3 * i] as number,
      ingest_ts: NaN,
      service: strings[strs[3 * i] as number] as string,
      route: strings[strs[3 * i + 1] as number] as string,
      status: nums[3 * i + 1] as number,
      latency_ms: nums[3 * i + 2] as number,
      user: strings[strs[3 * i + 2] as number] as string,
    };
    eventIndex[i] = p.index[i] as number;
  }
  const batch = RecordBatch.restore(maxEvents, { ...p, events, eventIndex });
  return { batch, skipped: p.skipped };
}
