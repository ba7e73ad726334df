/**
 * BackfillPlan: turns a recording (arrival order; docs/operations.md, "Backfill") into the
 * TM_EVENTS messages ingest would have written: events partitioned by `partitionOfEvent` (service, or service and route),
 * batched per partition in the compact batch (docs/decisions/0012-batched-transport.md), and a heartbeat to every partition each `heartbeatEveryMs` of the
 * recording's ingest_ts, so quiet partitions advance exactly as they would have live. The heartbeat
 * carries the ingest_ts of the event that crossed the boundary, which no later event of the
 * recording precedes.
 *
 * End of recording: a last heartbeat to every partition at `endOfRecordingTs` (see
 * `endOfRecordingTs`), so the live engine closes every window the way the offline `frontier`
 * does when the recording ends.
 *
 * Pure: no I/O, no clock. Message ids are `bf-<run id>-<n>`: the same file and options give the
 * same ids, so a re-run is deduplicated by TM_EVENTS.
 */
import type { CoreConfig } from "../../core/types.js";
import { encodeEventBatchBody, partitionOfEvent, type PartitionBy, type TelemetryEvent } from "../../protocol.js";

const EMPTY = new Uint8Array(0);

export interface BackfillMessage {
  partition: number;
  msgId: string;
  /** An event batch as ingest writes it (the compact batch, ADR 0012), or empty for a heartbeat. */
  body: Uint8Array;
  /** Heartbeat time (ms) or undefined for an event batch. */
  heartbeatTs: number | undefined;
  events: number;
}

export interface BackfillPlanOptions {
  partitions: number;
  /** As ingest partitions (default "service"; docs/decisions/0032-partition-by-route.md). */
  partitionBy?: PartitionBy;
  runId: string;
  batchSize?: number;
  heartbeatEveryMs?: number;
}

export class BackfillPlan {
  private readonly buffers: TelemetryEvent[][];
  private readonly batchSize: number;
  private readonly heartbeatEveryMs: number;
  private n = 0;
  private bucket = -Infinity;
  private maxIngest = -Infinity;
  private maxTs = -Infinity;
  private maxDelay = 0;
  /** Events whose ingest_ts was below an earlier one (the recording is not in arrival order there). */
  outOfOrder = 0;
  eventsSeen = 0;

  constructor(private readonly opts: BackfillPlanOptions) {
    this.buffers = Array.from({ length: opts.partitions }, () => []);
    this.batchSize = opts.batchSize ?? 500;
    this.heartbeatEveryMs = opts.heartbeatEveryMs ?? 1_000;
  }

  /** Adds one event; returns the messages that are complete. */
  push(e: TelemetryEvent): BackfillMessage[] {
    const out: BackfillMessage[] = [];
    this.eventsSeen++;
    if (e.ingest_ts < this.maxIngest) this.outOfOrder++;
    else this.maxIngest = e.ingest_ts;
    if (e.ts > this.maxTs) this.maxTs = e.ts;
    if (e.ingest_ts - e.ts > this.maxDelay) this.maxDelay = e.ingest_ts - e.ts;
    const bucket = Math.floor(this.maxIngest / this.heartbeatEveryMs);
    if (bucket > this.bucket) {
      if (this.bucket !== -Infinity) {
        this.flushAll(out);
        this.heartbeats(this.maxIngest, out);
      }
      this.bucket = bucket;
    }
    const p = partitionOfEvent(e, this.opts.partitions, this.opts.partitionBy ?? "service");
    const buf = this.buffers[p] as TelemetryEvent[];
    buf.push(e);
    if (buf.length >= this.batchSize) this.flush(p, out);
    return out;
  }

  /** Flushes what is buffered and sends the end-of-recording heartbeat to every partition. */
  end(core: CoreConfig): BackfillMessage[] {
    const out: BackfillMessage[] = [];
    this.flushAll(out);
    if (this.eventsSeen > 0) this.heartbeats(this.endOfRecordingTs(core), out);
    return out;
  }

  /**
   * The end-of-recording rule: past the last event, log time jumps to
   * max(last ingest_ts, largest ts + largest window) + max(reference horizon, largest delay + grace) + 1 s,
   * where every window of the recording has closed for every arrival-lag and percentile policy
   * and for the bias reference. (A `bounded` watermark moves with event time only; heartbeats
   * cannot close its last windows.)
   */
  endOfRecordingTs(core: CoreConfig): number {
    const maxWindow = Math.max(...core.windows.map((w) => w.sizeMs));
    const maxGrace = Math.max(0, ...core.policies.map((p) => p.graceMs));
    const horizon = Math.max(core.referenceHorizonMs, this.maxDelay + maxGrace);
    return Math.max(this.maxIngest, this.maxTs + maxWindow) + horizon + 1_000;
  }

  private heartbeats(ts: number, out: BackfillMessage[]): void {
    for (let p = 0; p < this.opts.partitions; p++)
      out.push({ partition: p, msgId: this.id(), body: EMPTY, heartbeatTs: ts, events: 0 });
  }

  private flushAll(out: BackfillMessage[]): void {
    for (let p = 0; p < this.opts.partitions; p++) this.flush(p, out);
  }

  private flush(p: number, out: BackfillMessage[]): void {
    const buf = this.buffers[p] as TelemetryEvent[];
    if (buf.length === 0) return;
    out.push({
      partition: p,
      msgId: this.id(),
      body: encodeEventBatchBody(buf),
      heartbeatTs: undefined,
      events: buf.length,
    });
    this.buffers[p] = [];
  }

  private id(): string {
    return `bf-${this.opts.runId}-${this.n++}`;
  }
}
