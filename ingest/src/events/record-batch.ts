/**
 * Collects the outcome of one request's records: accepted events, the rejected count, the first
 * 100 per-record errors, clamp counts. Enforces the per-request event limit (413). A batch parsed
 * with its time DEFERRED (normalize-event.ts) gets its ingest_ts and the time rules from stamp().
 */
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import { IngestError } from "../errors.js";
import { timeAt, type EventLimits, type Normalized, type RecordError, type RejectReason } from "./normalize-event.js";

export const MAX_REPORTED_ERRORS = 100;

export class RecordBatch {
  readonly events: TelemetryEvent[] = [];
  /** The record index of each event (for the errors stamp() adds). */
  readonly eventIndex: number[] = [];
  errors: RecordError[] = [];
  rejected = 0;
  clamped = 0;
  readonly rejectedBy: Record<RejectReason, number> = { invalid: 0, too_old: 0 };
  private records = 0;

  constructor(private readonly maxEvents: number) {}

  /** Counts one more record; throws 413 past the per-request limit. */
  private count(): void {
    if (++this.records > this.maxEvents)
      throw new IngestError(
        "TM_INGEST_TOO_MANY_EVENTS",
        `more than ${this.maxEvents} records in one request: split it into smaller requests`,
      );
  }

  /** A record that is not an event (an OTLP span neither server nor root): counted toward the limit all the same. */
  skip(): void {
    this.count();
  }

  add(result: Normalized, index: number): void {
    if (!result.ok) return this.reject(index, result.field, result.message, result.reason);
    this.count();
    this.events.push(result.event);
    this.eventIndex.push(index);
    if (result.clamped) this.clamped++;
  }

  /**
   * Stamps every event with `ingestTs` and applies the time rules at it (docs/ingest.md): a ts too
   * old is rejected (its error merged in record order into the first 100), a future one clamped.
   */
  stamp(ingestTs: number, limits: EventLimits): void {
    const late: RecordError[] = [];
    let kept = 0;
    for (let i = 0; i < this.events.length; i++) {
      const e = this.events[i] as TelemetryEvent;
      const at = timeAt(e.ts, ingestTs, limits);
      if (typeof at === "string") {
        this.rejected++;
        this.rejectedBy.too_old++;
        if (late.length < MAX_REPORTED_ERRORS)
          late.push({ index: this.eventIndex[i] as number, field: "ts", message: at });
        continue;
      }
      e.ts = at.ts;
      e.ingest_ts = ingestTs;
      if (at.clamped) this.clamped++;
      this.eventIndex[kept] = this.eventIndex[i] as number;
      this.events[kept++] = e;
    }
    this.events.length = kept;
    this.eventIndex.length = kept;
    if (late.length > 0) this.errors = mergeByIndex(this.errors, late);
  }

  /** The outcome of a batch parsed elsewhere (a parse worker, parse/batch-transfer.ts). */
  static restore(
    maxEvents: number,
    parts: {
      events: TelemetryEvent[];
      eventIndex: number[];
      errors: RecordError[];
      rejected: number;
      clamped: number;
      rejectedBy: Record<RejectReason, number>;
      records: number;
    },
  ): RecordBatch {
    const b = new RecordBatch(maxEvents);
    for (let i = 0; i < parts.events.length; i++) {
      b.events.push(parts.events[i] as TelemetryEvent);
      b.eventIndex.push(parts.eventIndex[i] as number);
    }
    b.errors = parts.errors;
    b.rejected = parts.rejected;
    b.clamped = parts.clamped;
    Object.assign(b.rejectedBy, parts.rejectedBy);
    b.records = parts.records;
    return b;
  }

  /** Records counted toward the limit (events, rejected and skipped). */
  get recordCount(): number {
    return this.records;
  }

  reject(index: number, field: string, message: string, reason: RejectReason = "invalid"): void {
    this.count();
    this.rejected++;
    this.rejectedBy[reason]++;
    if (this.errors.length < MAX_REPORTED_ERRORS) this.errors.push({ index, field, message });
  }
}

/** The first MAX_REPORTED_ERRORS of two lists each in record order, in record order. */
function mergeByIndex(a: readonly RecordError[], b: readonly RecordError[]): RecordError[] {
  const out: RecordError[] = [];
  let i = 0;
  let j = 0;
  while (out.length < MAX_REPORTED_ERRORS && (i < a.length || j < b.length)) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && x.index <= y.index)) {
      out.push(x as RecordError);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}
